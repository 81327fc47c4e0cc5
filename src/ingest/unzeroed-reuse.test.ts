/**
 * Reused column memory is handed to the parsers without being zeroed (column-memory.ts: `written`), so
 * every row a reader sees must have been set by the parse. Here the pool's blocks are first filled with
 * rows of other bodies, then bodies full of NULLs, gaps and type changes are parsed into that memory and
 * compared with the same bodies parsed into fresh memory.
 */
import { expect, test } from 'bun:test';
import { Packr } from 'msgpackr';
import type { Column, ColumnBatch } from './column-batch.ts';
import { columnMemory } from './column-memory.ts';
import { parseMsgpackWrite } from './msgpack/index.ts';

const packr = new Packr({ useRecords: false });
const NOW = 1_700_000_000_000_000;

/** Bodies whose every value is far from 0, to leave the blocks dirty. */
function dirtyBody(k: number): Uint8Array {
  const n = 20_000;
  const cols: Record<string, unknown[]> = { time: [], s: [], f: [], i: [], b: [], g: [] };
  for (let r = 0; r < n; r++) {
    cols.time!.push(NOW + k * n + r);
    cols.s!.push(`dirty_${r % 300}`);
    cols.f!.push(1e300 - r);
    cols.i!.push(-123_456_789 - r);
    cols.b!.push(true);
    cols.g!.push(-7.25);
  }
  return packr.pack({ m: 'dirty', columns: cols });
}

/** Columns with NULLs at the start, in the middle and at the end, a promotion, and a nearly empty one. */
function holeyColumnar(): Uint8Array {
  const n = 1000;
  const hole = (r: number) => r < 6 || (r >= 500 && r < 511) || r >= 990;
  const cols: Record<string, unknown[]> = { time: [], host: [], f: [], i: [], b: [], mixed: [], rare: [] };
  for (let r = 0; r < n; r++) {
    cols.time!.push(NOW + r);
    cols.host!.push(hole(r) ? null : `host_${r % 40}`);
    cols.f!.push(hole(r) ? null : r + 0.5);
    cols.i!.push(hole(r) ? null : r * 3);
    cols.b!.push(hole(r) ? null : r % 2 === 0);
    cols.mixed!.push(r < 400 ? r : hole(r) ? null : r + 0.25);
    cols.rare!.push(r === 700 ? 42.5 : null);
  }
  return packr.pack({ m: 'holey', columns: cols });
}

/** The row form: fields and tags present in some rows only (the parser fills the gaps with NULLs). */
function sparseRows(): Uint8Array {
  const rows = [];
  for (let r = 0; r < 300; r++) {
    const fields: Record<string, unknown> = { v: r + 0.5 };
    if (r % 3 === 0) fields.every3 = r;
    if (r % 7 === 0) fields.flag = r % 2 === 0;
    if (r > 250) fields.late = r * 1.5;
    const tags: Record<string, string> = r % 5 === 0 ? { region: `r${r % 4}` } : {};
    rows.push({ m: 'sparse', t: NOW + r, tags, fields });
  }
  return packr.pack(rows);
}

/** Everything a reader can see of a batch, with plain arrays (string columns resolved). */
function seen(b: ColumnBatch) {
  const columns: Record<string, unknown> = {};
  for (const [name, col] of b.columns) columns[name] = { type: col.type, values: Array.from(col.values as ArrayLike<unknown>), valid: col.valid ? [...col.valid] : null, tag: (col as Column & { tag?: boolean }).tag };
  return { measurement: b.measurement, length: b.length, time: [...b.time], columns };
}

const parseFresh = (body: Uint8Array) => parseMsgpackWrite(body, { now: NOW });
const parseReused = (body: Uint8Array) => columnMemory.parseInArena(() => parseMsgpackWrite(body, { now: NOW }));

test('bodies parsed into reused, unzeroed column memory read exactly as when parsed into fresh memory', () => {
  const bodies = [holeyColumnar(), sparseRows(), holeyColumnar(), sparseRows()];
  const expected = bodies.map((b) => parseFresh(b).map(seen));
  let reusedBefore = -1;
  for (let round = 0; round < 3; round++) {
    // Dirty blocks: bodies parsed, buffered (claimed), then flushed (released) as ingest does.
    const claims = [];
    for (let k = 0; k < 12; k++) for (const batch of parseReused(dirtyBody(k))) claims.push(columnMemory.claim(batch)!);
    columnMemory.release(claims);
    reusedBefore = columnMemory.stats().reusedCarvings;
    // Enough bodies that the parse runs past the current block into the released ones.
    for (let rep = 0; rep < 40; rep++) {
      const got = bodies.map((b) => parseReused(b));
      expect(got.map((batches) => batches.map(seen))).toEqual(expected);
      for (const batches of got) {
        for (const batch of batches) {
          // A NULL reads as 0 underneath too, as in fresh memory.
          for (const col of batch.columns.values()) {
            if (col.type === 'string' || col.valid === null) continue;
            for (let r = 0; r < batch.length; r++) if (col.valid[r] === 0) expect(Number(col.values[r])).toBe(0);
          }
          columnMemory.release([columnMemory.claim(batch)!]);
        }
      }
    }
    // The comparison ran on reused memory, not only on new blocks.
    expect(columnMemory.stats().reusedCarvings).toBeGreaterThan(reusedBefore);
  }
});
