import { afterAll, describe, expect, test } from 'bun:test';
import { AppError } from '../../lib/errors.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { parseLineProtocol, type LineProtocolOptions, type LineProtocolResult } from '../lineprotocol/index.ts';
import { parseMsgpackWrite } from '../msgpack/index.ts';
import { values } from '../test-support.ts';
import { Packr } from 'msgpackr';
import { MIN_MSGPACK_OFFLOAD_BYTES, MIN_OFFLOAD_BYTES, ParsePool } from './index.ts';

const opts: LineProtocolOptions = { precision: 'ns', now: 1_700_000_000_123_456 };

/** A body of `lines` lines over two measurements with every field type, escapes and a few bad lines. */
function body(lines: number): Uint8Array {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    if (i % 997 === 500) out.push(`cpu,host=h${i} usage=oops ${i}`);
    else if (i % 3 === 0) out.push(`mem,host=h${i % 7},dc=a\\ b used=${i}i,ok=${i % 2 ? 't' : 'false'},note="n \\"${i % 5}\\"" ${1_700_000_000_000_000_000n + BigInt(i)}`);
    else out.push(`cpu,host=host_${i % 100},region=r${i % 10} usage_user=${(i * 0.37).toFixed(3)},load=${i % 4}.5 ${1_700_000_000_000_000_000n + BigInt(i) * 1000n}`);
  }
  return new TextEncoder().encode(out.join('\n') + '\n');
}

/** A result as plain data: every column's values per batch. */
function plain(r: LineProtocolResult) {
  const batch = (b: ColumnBatch) => ({
    measurement: b.measurement,
    length: b.length,
    time: Array.from(b.time),
    columns: [...b.columns].map(([name, c]) => ({ name, type: c.type, tag: c.tag, values: values(b, name) })),
  });
  return { batches: r.batches.map(batch), errors: r.errors, lines: r.lines, rejected: r.rejected };
}

const pool = new ParsePool(2);
/** The path MessagePack bodies from 64 KiB took before they stayed on the event loop up to 4 MiB: a worker. */
const offloading = new ParsePool(2, undefined, MIN_OFFLOAD_BYTES);
afterAll(() => Promise.all([pool.close(), offloading.close()]));

/** A small deterministic PRNG (mulberry32), so a failing fuzz case can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random MessagePack write body of about `rows` rows: columnar maps and row maps over a few
 * measurements, with floats, ints (some past 2^53), mixed int/float, bools, strings, NULLs, times in
 * several units or missing; now and then a type mix or a length mismatch the parser must refuse.
 */
function fuzzBody(rnd: () => number, rows: number): Uint8Array {
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const value = (kind: string, i: number): unknown => {
    if (rnd() < 0.05) return null;
    if (kind === 'float') return (rnd() - 0.5) * 1e6;
    if (kind === 'int') return rnd() < 0.01 ? 2n ** 60n + BigInt(i) : Math.floor((rnd() - 0.5) * 1e9);
    if (kind === 'mixed') return rnd() < 0.5 ? i : i + 0.5;
    if (kind === 'bool') return rnd() < 0.5;
    return `v_${Math.floor(rnd() * (rnd() < 0.5 ? 10 : 5000))}`;
  };
  const kinds = ['float', 'int', 'mixed', 'bool', 'string'];
  const base = 1_700_000_000_000_000 + Math.floor(rnd() * 1e12);
  const unit = pick([1, 1000, 1_000_000, 0.001]); // µs, ms (as µs / 1000 below), s, ns
  const time = (i: number) => (unit === 0.001 ? BigInt(base + i) * 1000n : Math.floor((base + i * 1000) / unit));
  const items: unknown[] = [];
  for (let left = rows; left > 0; ) {
    const n = Math.min(left, 1 + Math.floor(rnd() * rows));
    left -= n;
    const m = pick(['cpu', 'mem', 'disk']);
    if (rnd() < 0.7) {
      const columns: Record<string, unknown[]> = {};
      if (rnd() < 0.9) columns.time = Array.from({ length: n }, (_, i) => time(i));
      for (let c = 0, cols = 1 + Math.floor(rnd() * 6); c < cols; c++) {
        const kind = pick(kinds);
        columns[`${kind}_${c}`] = Array.from({ length: n }, (_, i) => value(kind, i));
      }
      if (rnd() < 0.03) columns.short = [1.5];
      if (rnd() < 0.03) columns.clash = ['a', ...Array.from({ length: n - 1 }, () => 2.5)];
      items.push({ m, columns });
    } else {
      const fieldKinds = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(kinds));
      for (let i = 0; i < Math.min(n, 500); i++) {
        const fields: Record<string, unknown> = { f0: (rnd() - 0.5) * 100 };
        fieldKinds.forEach((k, c) => (fields[`${k}_${c}`] = value(k, i)));
        items.push({ m, t: rnd() < 0.9 ? time(i) : undefined, tags: { host: `h${Math.floor(rnd() * 20)}` }, fields });
      }
    }
  }
  const payload = rnd() < 0.5 ? items : { batch: items };
  return new Uint8Array(new Packr({ useRecords: false, largeBigIntToFloat: false }).pack(payload));
}

/** What a parse gave: the batches as plain data, or the refusal's status and message. */
async function outcome(parse: () => ColumnBatch[] | Promise<ColumnBatch[]>) {
  try {
    return { batches: plain({ batches: await parse(), errors: [], lines: 0, rejected: 0 }).batches };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, message: err.message };
  }
}

describe('ParsePool', () => {
  test('a large body parsed in a worker gives exactly the in-place result (rows, types, NULLs, line errors)', async () => {
    const bytes = body(5000);
    expect(bytes.byteLength).toBeGreaterThan(MIN_OFFLOAD_BYTES);
    const here = plain(parseLineProtocol(bytes, opts));
    expect(here.rejected).toBeGreaterThan(0);
    const before = pool.offloaded;
    expect(plain(await pool.parseLineProtocol(bytes, opts))).toEqual(here);
    expect(pool.offloaded).toBe(before + 1);
  });

  test('a small body is parsed in place', async () => {
    const bytes = body(20);
    const before = pool.offloaded;
    expect(plain(await pool.parseLineProtocol(bytes, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
    expect(pool.offloaded).toBe(before);
  });

  test('concurrent bodies each get their own answer', async () => {
    const bodies = [body(3000), body(4000), body(5000), body(6000), body(2000)];
    const expected = bodies.map((b) => plain(parseLineProtocol(b, opts)));
    const before = pool.offloaded;
    const results = await Promise.all(bodies.map((b) => pool.parseLineProtocol(b, opts)));
    expect(pool.offloaded).toBe(before + bodies.length);
    results.forEach((r, i) => expect(plain(r)).toEqual(expected[i]!));
  });

  test('a whole-buffer body is handed over without a copy (detached here), a view is copied', async () => {
    const whole = body(3000).slice(); // a buffer of its own, as a received request body is
    await pool.parseLineProtocol(whole, opts);
    expect(whole.byteLength).toBe(0);
    const big = body(3000);
    const view = big.subarray(0, big.byteLength - 1);
    await pool.parseLineProtocol(view, opts);
    expect(big.byteLength).toBeGreaterThan(0);
  });

  test('a view into a larger buffer is parsed as just the view', async () => {
    const bytes = body(3000);
    const big = new Uint8Array(bytes.byteLength + 1000);
    big.set(bytes, 500);
    big.fill(35, 0, 500); // '#' comments would add nothing; garbage before the view must not be read
    const view = big.subarray(500, 500 + bytes.byteLength);
    expect(plain(await pool.parseLineProtocol(view, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
  });

  test("the parser's own error reaches the caller (a bad option throws an AppError)", async () => {
    const bad = { precision: 'h', now: 0 } as unknown as LineProtocolOptions;
    const err = await pool.parseLineProtocol(body(2000), bad).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toContain("unknown precision 'h'");
  });

  test('MessagePack: a body of 4 MiB and more goes to a worker and gives the in-place batches; a bad one the same 400', async () => {
    const rows = 160_000;
    const columns = {
      time: Array.from({ length: rows }, (_, i) => 1_700_000_000_000_000 + i),
      host: Array.from({ length: rows }, (_, i) => `host_${i % 100}`),
      v: Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : i * 0.25)),
      n: Array.from({ length: rows }, (_, i) => i),
    };
    const bytes = new Packr({ useRecords: false }).pack({ m: 'cpu', columns }).slice();
    expect(bytes.byteLength).toBeGreaterThanOrEqual(MIN_MSGPACK_OFFLOAD_BYTES);
    const now = 1_700_000_000_123_456;
    const here = await outcome(() => parseMsgpackWrite(bytes, { now }));
    const before = pool.offloaded;
    expect(await outcome(() => pool.parseMsgpack(bytes, now))).toEqual(here);
    expect(pool.offloaded).toBe(before + 1);

    const bad = new Packr({ useRecords: false }).pack({ m: 'cpu', columns: { ...columns, n: columns.n.slice(1) } }).slice();
    const inPlace = await outcome(() => parseMsgpackWrite(bad, { now }));
    expect(inPlace.status).toBe(400);
    expect(await outcome(() => pool.parseMsgpack(bad, now))).toEqual(inPlace);
  });

  test('MessagePack: a body between 64 KiB and 4 MiB is parsed in place, then freed; the batches copied what they hold', async () => {
    const rows = 20_000;
    const columns = {
      time: Array.from({ length: rows }, (_, i) => 1_700_000_000_000_000 + i),
      v: Array.from({ length: rows }, (_, i) => i * 0.5),
      host: Array.from({ length: rows }, (_, i) => `host_${i % 7}`),
      note: Array.from({ length: rows }, (_, i) => (i % 2 ? null : `n${i % 300}`)),
    };
    const bytes = new Uint8Array(new Packr({ useRecords: false }).pack({ m: 'cpu', columns }));
    expect(bytes.byteLength).toBeGreaterThan(MIN_OFFLOAD_BYTES);
    expect(bytes.byteLength).toBeLessThan(MIN_MSGPACK_OFFLOAD_BYTES);
    const before = pool.offloaded;
    const batches = await pool.parseMsgpack(bytes, 0);
    expect(pool.offloaded).toBe(before);
    expect(batches[0]!.length).toBe(rows);
    expect(bytes.byteLength).toBe(0); // handed over: detached, its memory free for the next body
    const b = batches[0]!;
    expect(Array.from(b.time.subarray(0, 2))).toEqual([1_700_000_000_000_000, 1_700_000_000_000_001]);
    for (const name of ['v', 'host', 'note'] as const) expect(b.columns.get(name)!.values.length).toBe(rows);
    expect([0, 1, rows - 1].map((i) => [b.columns.get('v')!.values[i], b.columns.get('host')!.values[i], b.columns.get('note')!.values[i]])).toEqual([
      [0, 'host_0', 'n0'],
      [0.5, 'host_1', null],
      [(rows - 1) * 0.5, `host_${(rows - 1) % 7}`, null],
    ]);
  });

  test('MessagePack, fuzzed: parsed in place (now) and in a worker (before) give the same batches or the same 400', async () => {
    const rnd = prng(28);
    const now = 1_700_000_000_123_456;
    let refused = 0;
    let offloaded = 0;
    for (let k = 0; k < 40; k++) {
      const bytes = fuzzBody(rnd, 200 + Math.floor(rnd() * 6000));
      const before = offloading.offloaded;
      // The worker's copy first: a body parsed in place is freed (handed over).
      const inWorker = await outcome(() => offloading.parseMsgpack(bytes.slice(), now));
      const inPlace = await outcome(() => pool.parseMsgpack(bytes, now));
      offloaded += offloading.offloaded - before;
      expect(inPlace).toEqual(inWorker);
      if ('status' in inPlace) refused++;
    }
    // The fuzzer reaches both outcomes, and most bodies really went through a worker on the old path.
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(40);
    expect(offloaded).toBeGreaterThan(20);
  });

  test('size 0 parses in place with the same result', async () => {
    const none = new ParsePool(0);
    const bytes = body(2000);
    expect(plain(await none.parseLineProtocol(bytes, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
    await none.close();
  });
});
