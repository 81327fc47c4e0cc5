import { describe, expect, test } from 'bun:test';
import type { ColumnBatch } from './column-batch.ts';
import { ColumnMemoryPool, type MemoryClaim } from './column-memory.ts';

// 512 KiB per array, two per batch: a 4 MiB block holds two bodies of two batches.
const ROWS = 65536;

/** A batch whose time and value columns are carved from `pool` (inside an arena), every value `value`. */
function carved(pool: ColumnMemoryPool, value: number, rows = ROWS): ColumnBatch {
  const time = new Float64Array(...pool.carve(rows * 8)!, rows);
  const v = new Float64Array(...pool.carve(rows * 8)!, rows);
  // Zeroed, also when the block held rows before.
  expect(time.every((x) => x === 0) && v.every((x) => x === 0)).toBe(true);
  time.fill(value);
  v.fill(value);
  return { measurement: 'm', length: ROWS, time, columns: new Map([['v', { type: 'float64', values: v, valid: null, tag: false }]]) };
}

const parse = (pool: ColumnMemoryPool, ...values: number[]) => pool.parseInArena(() => values.map((x) => carved(pool, x)));
const parseRows = (pool: ColumnMemoryPool, rows: number, values: number[]) => pool.parseInArena(() => values.map((x) => carved(pool, x, rows)));
const claimAll = (pool: ColumnMemoryPool, batches: ColumnBatch[]) => batches.map((b) => pool.claim(b)!);

/** Every array of `batches`, for overlap checks. */
const arrays = (batches: ColumnBatch[]) => batches.flatMap((b) => [b.time, ...[...b.columns.values()].map((c) => c.values as Float64Array)]);
const overlap = (a: Float64Array, b: Float64Array) =>
  a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;

/**
 * Writes `bodies` bodies (more than the pool keeps free) and then flushes them (claimed, released), as
 * steady ingest does; true when one of them was given memory of `held`.
 */
function reusesMemoryOf(pool: ColumnMemoryPool, held: ColumnBatch[], bodies = 40): boolean {
  const mine = arrays(held);
  let hit = false;
  const claims: MemoryClaim[] = [];
  for (let i = 0; i < bodies; i++) {
    const body = parse(pool, -1 - i);
    if (arrays(body).some((a) => mine.some((m) => overlap(a, m)))) hit = true;
    claims.push(...claimAll(pool, body));
  }
  pool.release(claims);
  return hit;
}

/** Every `stride`-th value (and the last) of each batch is still what was written. */
const intact = (batches: ColumnBatch[], values: number[], stride = 1) =>
  batches.every((b, i) =>
    [b.time, b.columns.get('v')!.values as Float64Array].every((a) => {
      for (let j = 0; j < a.length; j += stride) if (a[j] !== values[i]) return false;
      return a[a.length - 1] === values[i];
    }),
  );

describe('ColumnMemoryPool', () => {
  test('outside an arena nothing is carved; inside, arrays come from shared blocks', () => {
    const pool = new ColumnMemoryPool();
    expect(pool.carve(80)).toBeNull();
    const [b] = parse(pool, 1);
    expect(b!.time.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect((b!.columns.get('v')!.values as Float64Array).buffer).toBe(b!.time.buffer);
  });

  test('claimed memory is not reused until every batch of its body was released; then it is, zeroed', () => {
    const pool = new ColumnMemoryPool();
    const body = parse(pool, 1, 2);
    const [a, b] = claimAll(pool, body);
    expect(reusesMemoryOf(pool, body)).toBe(false);
    expect(reusesMemoryOf(pool, body)).toBe(false);
    expect(pool.stats().reusedCarvings).toBeGreaterThan(0); // the other bodies' memory was reused
    pool.release([a!]);
    pool.release([a!]); // a second release of the same claim is ignored
    expect(reusesMemoryOf(pool, body)).toBe(false); // the second batch still holds the body
    expect(intact(body, [1, 2])).toBe(true);
    pool.release([b!]);
    expect(reusesMemoryOf(pool, body)).toBe(true);
  });

  test('a batch claimed twice (buffered twice) keeps its body\'s memory for good', () => {
    const pool = new ColumnMemoryPool();
    const body = parse(pool, 5, 6);
    const claims = claimAll(pool, body);
    expect(pool.claim(body[0]!)).toBeNull();
    pool.release(claims);
    expect(reusesMemoryOf(pool, body)).toBe(false);
    expect(intact(body, [5, 6])).toBe(true);
  });

  test('a parse inside a parse has an arena of its own', () => {
    const pool = new ColumnMemoryPool();
    let inner: ColumnBatch[] = [];
    const outer = pool.parseInArena(() => {
      const first = carved(pool, 1);
      inner = parse(pool, 2);
      return [first, carved(pool, 3)];
    });
    pool.release(claimAll(pool, outer));
    const innerClaims = claimAll(pool, inner); // still buffered: its memory must stay
    expect(reusesMemoryOf(pool, inner)).toBe(false);
    expect(intact(inner, [2])).toBe(true);
    pool.release(innerClaims);
    expect(reusesMemoryOf(pool, [...outer, ...inner])).toBe(true);
  });

  test('a pin taken before a release keeps the memory until it is dropped; a later pin does not', () => {
    const pool = new ColumnMemoryPool();
    const body = parse(pool, 7);
    const claims = claimAll(pool, body);
    const reader = pool.pin(); // a query whose snapshot holds these rows
    pool.release(claims);
    expect(pool.stats().waiting).toBe(1);
    expect(reusesMemoryOf(pool, body)).toBe(false);
    expect(intact(body, [7])).toBe(true);
    reader();
    reader(); // dropping twice is harmless
    expect(pool.stats()).toMatchObject({ waiting: 0, pins: 0 });
    expect(reusesMemoryOf(pool, body)).toBe(true);
    // A pin taken after the release (its snapshot cannot hold the rows) does not delay their reuse.
    const other = parse(pool, 8);
    const otherClaims = claimAll(pool, other);
    pool.release(otherClaims);
    const later = pool.pin();
    expect(pool.stats().waiting).toBe(0);
    later();
  });

  test('a parse that throws, and batches never claimed, keep their memory for good', () => {
    const pool = new ColumnMemoryPool();
    let thrown: ColumnBatch | null = null;
    expect(() =>
      pool.parseInArena(() => {
        thrown = carved(pool, 3);
        throw new Error('bad body');
      }),
    ).toThrow('bad body');
    const unclaimed = parse(pool, 4);
    expect(reusesMemoryOf(pool, [thrown!, ...unclaimed])).toBe(false);
    expect(intact([thrown!, ...unclaimed], [3, 4])).toBe(true);
  });

  test('many bodies in flight, released out of order, with pins coming and going: nothing readable is ever overwritten', () => {
    const pool = new ColumnMemoryPool();
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    type Body = { batches: ColumnBatch[]; values: number[] };
    const live: (Body & { claims: MemoryClaim[] })[] = []; // buffered: claimed, not yet released
    const read: (Body & { unpin: () => void })[] = []; // released while a reader held a snapshot of them
    for (let i = 0; i < 400; i++) {
      const values = random() < 0.5 ? [i] : [i, i + 0.5];
      const batches = parseRows(pool, 1000 + Math.floor(random() * 60000), values);
      live.push({ batches, values, claims: claimAll(pool, batches) });
      // A flush registers a random buffered body; half the time a reader pinned a snapshot of it first.
      while (live.length > 6 || random() < 0.3) {
        const [body] = live.splice(Math.floor(random() * live.length), 1);
        if (random() < 0.5) read.push({ ...body!, unpin: pool.pin() });
        pool.release(body!.claims);
        if (live.length === 0) break;
      }
      for (let k = read.length - 1; k >= 0; k--) if (random() < 0.2) read.splice(k, 1)[0]!.unpin();
      for (const body of [...live, ...read]) expect(intact(body.batches, body.values, 97)).toBe(true);
    }
    for (const body of [...live, ...read]) expect(intact(body.batches, body.values)).toBe(true);
    expect(pool.stats().reusedCarvings).toBeGreaterThan(50);
  });

  test('empty batches are not tracked; large arrays get memory of their own', () => {
    const pool = new ColumnMemoryPool();
    const [empty] = pool.parseInArena(() => [{ measurement: 'm', length: 0, time: new Float64Array(0), columns: new Map() }]);
    expect(pool.claim(empty!)).toBeNull();
    pool.parseInArena(() => {
      expect(pool.carve(2 << 20)).toBeNull();
      return [];
    });
  });
});
