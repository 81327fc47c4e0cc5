/**
 * The C JSON row writer against the JavaScript one (json-rows.ts) on the same chunks, and against
 * independent readings of the values: rows larger than an output block, rows handed back to
 * JavaScript among rows written in C, strings that need every escape.
 */
import { expect, test } from 'bun:test';
import { longStrings, resultChunks } from '../../duckdb/index.ts';
import { memoryConnection } from '../../../tests/helpers/duckdb.ts';
import { ByteSink } from './byte-sink.ts';
import { vectorWidth } from './column-kind.ts';
import { NativeJsonRows } from './json-native.ts';
import { JsonRows, type RowColumn } from './json-rows.ts';
import { resultColumns } from './result.ts';

const conn = await memoryConnection();

/** The rows of `sql` written by both writers: [C text, JavaScript text, rows handed back]. */
async function both(sql: string): Promise<[string, string, number]> {
  const res = await conn.run(sql);
  const columns = resultColumns(res.columnNames(), res.columnTypes());
  const kinds = columns.map((c) => c.kind);
  const native = NativeJsonRows.for(kinds);
  expect(native).not.toBeNull();
  const js = new JsonRows(kinds);
  const chunks = resultChunks(res, columns.length);
  const a = new ByteSink();
  const b = new ByteSink();
  let handedBack = 0;
  const jsRows = (sink: ByteSink, chunk: ReturnType<typeof chunks.chunk>, from: number, to: number, first: boolean) => {
    const cols = columns.map((c, ci): RowColumn => {
      const raw = chunk.vector(ci, vectorWidth(c.kind) || 1);
      return { raw, strings: c.kind.k === 'varchar' ? longStrings(raw) : undefined };
    });
    js.write(sink, cols, from, to, first);
  };
  for (let i = 0; i < chunks.count; i++) {
    const chunk = chunks.chunk(i);
    native!.write(a, chunk, i === 0, (row, first) => {
      handedBack++;
      jsRows(a, chunk, row, row + 1, first);
    });
    jsRows(b, chunk, 0, chunk.rowCount, i === 0);
    chunk.release();
  }
  chunks.close();
  const text = (s: ByteSink) => new TextDecoder().decode(s.toBytes());
  return [text(a), text(b), handedBack];
}

test('rows larger than an output block, and strings needing every escape, read back as they were', async () => {
  const sql = `SELECT i, CASE WHEN i % 3 = 0 THEN repeat(chr(10) || '"' || chr(92) || chr(1) || 'é', 4000 + i) ELSE 'x' || i END AS s FROM range(40) r(i)`;
  const [c, js, handedBack] = await both(sql);
  expect(c).toBe(js);
  expect(handedBack).toBe(0);
  const rows = JSON.parse(`[${c}]`) as [number, string][];
  const expected = (await conn.runAndReadAll(sql)).getRows().map(([i, s]) => [Number(i), s]);
  expect(rows).toEqual(expected as [number, string][]);
  // The longest row is 60 KB of escapes, far over the first 4 KB block.
  expect(c.length).toBeGreaterThan(40 * 4000 * 4);
});

test('rows with years outside 0000-9999 are handed back and land in order among the others', async () => {
  const sql = `SELECT i, CASE WHEN i % 700 = 5 THEN 'infinity'::TIMESTAMP WHEN i % 700 = 6 THEN '10000-01-01 00:00:01'::TIMESTAMP
      ELSE make_timestamp(i::BIGINT * 1000003) END AS t,
    CASE WHEN i % 900 = 7 THEN '-infinity'::DATE WHEN i % 900 = 8 THEN '-0001-06-30'::DATE ELSE DATE '2024-02-28' + i::INTEGER END AS d
    FROM range(5000) r(i)`;
  const [c, js, handedBack] = await both(sql);
  expect(c).toBe(js);
  expect(handedBack).toBe(Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 700 === 5 || i % 700 === 6 || i % 900 === 7 || i % 900 === 8).length);
  const rows = JSON.parse(`[${c}]`) as [number, string, string][];
  expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  expect(rows[5]).toEqual([5, 'infinity', '2024-03-04']);
  expect(rows[6]).toEqual([6, '+010000-01-01T00:00:01Z', '2024-03-05']);
  expect(rows[7]![2]).toBe('-infinity');
  expect(rows[8]![2]).toBe('-000001-06-30');
  // Within 0000-9999, the text is the one JavaScript's Date gives for the same millisecond and microseconds.
  for (const [i, t] of rows) {
    if (i % 700 === 5 || i % 700 === 6) continue;
    const us = i * 1000003;
    const iso = new Date(Math.floor(us / 1000)).toISOString();
    const frac = `${iso.slice(20, 23)}${String(us % 1000).padStart(3, '0')}`.replace(/0+$/, '');
    expect(t).toBe(`${iso.slice(0, 19)}${frac ? `.${frac}` : ''}Z`);
  }
});
