/**
 * Every native encoder against its TypeScript twin on fuzzed chunks (tests/helpers/native-corpus.ts):
 * the C JSON writer (src/native/json-rows.c) against JsonRows, and the string copies
 * (src/native/strings.c) against raw-vector.ts; byte for byte. Then the same C, compiled by the
 * system compiler with AddressSanitizer and UndefinedBehaviorSanitizer into tests/native/harness.c,
 * runs over the same corpus and must give the same bytes without a report. NULL slots hold garbage,
 * as DuckDB leaves them: issue 21's bug (a string length read under a NULL) fails both tests.
 */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import type { ResultChunk } from '../src/duckdb/index.ts';
import { copyStrings, longStrings, stringTotal, type RawVector } from '../src/duckdb/raw-vector.ts';
import { nativeStrings } from '../src/native/index.ts';
import { ByteSink } from '../src/query/encode/byte-sink.ts';
import { NativeJsonRows } from '../src/query/encode/json-native.ts';
import { JsonRows, type RowColumn } from '../src/query/encode/json-rows.ts';
import { corpusFile, fuzzCase, place, type FuzzCase, type PlacedChunk } from './helpers/native-corpus.ts';
import { runSanitized } from './helpers/sanitized-c.ts';

const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);
const cases = SEEDS.map(fuzzCase);

function rowColumns(c: FuzzCase, placed: PlacedChunk): RowColumn[] {
  return c.columns.map((col, ci) => {
    const raw: RawVector = { rows: placed.rows, data: placed.data[ci]!, validity: placed.validity[ci]! };
    return { raw, strings: col.kind.k === 'varchar' || col.kind.k === 'json' ? longStrings(raw) : undefined };
  });
}

/** The JSON rows of a case by the C writer; rows it hands back go to `handback`. */
function nativeJson(c: FuzzCase, handback: (sink: ByteSink, cols: RowColumn[], row: number, first: boolean) => void): Uint8Array {
  const writer = NativeJsonRows.for(c.columns.map((col) => col.kind));
  if (!writer) throw new Error('the C JSON writer did not load');
  const sink = new ByteSink();
  c.chunks.forEach((chunk, index) => {
    const placed = place(chunk, c.columns);
    const cols = rowColumns(c, placed);
    writer.write(sink, { rowCount: placed.rows, addresses: placed.addresses } as ResultChunk, index === 0, (row, first) => handback(sink, cols, row, first));
  });
  return sink.toBytes();
}

function typescriptJson(c: FuzzCase): Uint8Array {
  const rows = new JsonRows(c.columns.map((col) => col.kind));
  const sink = new ByteSink();
  c.chunks.forEach((chunk, index) => rows.write(sink, rowColumns(c, place(chunk, c.columns)), 0, chunk.rows, index === 0));
  return sink.toBytes();
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

test('the C JSON writer writes the same bytes as the TypeScript one on fuzzed chunks of every kind', () => {
  let handedBack = 0;
  let nulls = 0;
  for (const c of cases) {
    const js = new JsonRows(c.columns.map((col) => col.kind));
    const native = nativeJson(c, (sink, cols, row, first) => {
      handedBack++;
      js.write(sink, cols, row, row + 1, first);
    });
    const expected = typescriptJson(c);
    if (Buffer.compare(native, expected) !== 0) {
      // The neighbourhood of the first difference: whole outputs are megabytes.
      let at = 0;
      while (native[at] === expected[at]) at++;
      const around = (b: Uint8Array) => `seed ${c.seed} at ${at}: ${text(b.subarray(Math.max(0, at - 300), at + 100))}`;
      expect(around(native)).toBe(around(expected));
    }
    const rows = JSON.parse(`[${text(native)}]`) as unknown[][];
    expect(rows.length).toBe(c.chunks.reduce((n, ch) => n + ch.rows, 0));
    nulls += rows.flat().filter((v) => v === null).length;
  }
  // The corpus is what it claims: rows handed back to TypeScript and NULLs over garbage.
  expect(handedBack).toBeGreaterThan(100);
  expect(nulls).toBeGreaterThan(10_000);
}, 120_000);

/** Per chunk, per VARCHAR column: the end, the rows + 1 offsets and the bytes, as the harness writes them. */
function stringsOf(c: FuzzCase, copy: (raw: RawVector, placed: PlacedChunk, ci: number) => { end: number; offsets: Int32Array; data: Uint8Array }): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const chunk of c.chunks) {
    const placed = place(chunk, c.columns);
    c.columns.forEach((col, ci) => {
      if (col.kind.k !== 'varchar') return;
      const raw: RawVector = { rows: placed.rows, data: placed.data[ci]!, validity: placed.validity[ci]! };
      const { end, offsets, data } = copy(raw, placed, ci);
      const head = new Uint8Array(8);
      new DataView(head.buffer).setBigUint64(0, BigInt(end), true);
      parts.push(head, new Uint8Array(offsets.buffer), data.subarray(0, end));
    });
  }
  return Buffer.concat(parts);
}

const typescriptStrings = (c: FuzzCase) =>
  stringsOf(c, (raw) => {
    const total = stringTotal(raw);
    const offsets = new Int32Array(raw.rows + 1);
    const data = new Uint8Array(total + 12);
    return { end: copyStrings(raw, offsets, 0, 0, data), offsets, data };
  });

test('the C string copies give the same offsets and bytes as the TypeScript ones on fuzzed chunks', () => {
  const c = nativeStrings();
  if (!c) throw new Error('the C string copier did not load');
  for (const fc of cases) {
    const native = stringsOf(fc, (raw, placed, ci) => {
      const total = c.stringTotal(placed.addresses[1 + 2 * ci]!, placed.addresses[2 + 2 * ci]!, raw.rows);
      expect(total).toBe(stringTotal(raw));
      const offsets = new Int32Array(raw.rows + 1);
      const data = new Uint8Array(total + 12);
      return { end: c.strings(placed.addresses[1 + 2 * ci]!, placed.addresses[2 + 2 * ci]!, raw.rows, offsets, 0, 0, data), offsets, data };
    });
    expect(Buffer.compare(native, typescriptStrings(fc))).toBe(0);
  }
}, 120_000);

test('the same C under AddressSanitizer and UndefinedBehaviorSanitizer gives the same bytes without a report', () => {
  const out = runSanitized(join(import.meta.dir, 'native', 'harness.c'), corpusFile(cases));
  const expected: Uint8Array[] = [];
  for (const c of cases) {
    const json = nativeJson(c, (sink, _cols, _row, first) => sink.ascii(first ? 'H' : ',H'));
    const strings = typescriptStrings(c);
    const lengths = new Uint8Array(16);
    new DataView(lengths.buffer).setBigUint64(0, BigInt(json.length), true);
    new DataView(lengths.buffer).setBigUint64(8, BigInt(strings.length), true);
    expected.push(lengths.subarray(0, 8), json, lengths.subarray(8), strings);
  }
  expect(out.length).toBe(Buffer.concat(expected).length);
  expect(Buffer.compare(out, Buffer.concat(expected))).toBe(0);
}, 120_000);
