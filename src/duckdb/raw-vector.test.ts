/**
 * NULL rows of a VARCHAR vector: DuckDB leaves their 16-byte string headers as the memory was (stale
 * bytes of whatever used it before), so nothing may read a length or pointer from them.
 */
import { expect, test } from 'bun:test';
import { memoryConnection } from '../../tests/helpers/duckdb.ts';
import { longStrings } from './raw-vector.ts';
import { nativeResultsEnabled, resultChunks } from './result-chunks.ts';
import { JsonEncoder } from '../query/encode/json-encoder.ts';
import { resultColumns } from '../query/encode/result.ts';

const LONG = 'a string longer than twelve bytes';
const conn = await memoryConnection();

test('long strings and JSON skip the stale headers of NULL rows', async () => {
  const res = await conn.run(`SELECT CASE WHEN i = 0 THEN NULL ELSE '${LONG}' END AS s FROM range(2) r(i)`);
  const chunks = resultChunks(res, 1);
  const chunk = chunks.chunk(0);
  const raw = chunk.vector(0, 16);
  expect(raw.validity).not.toBeNull();
  // What DuckDB may leave in row 0: a "long string" header, here one pointing at row 1's bytes (a
  // readable address; a stale one usually is not, and reading it crashed the process).
  const w = new Uint32Array(raw.data.buffer, raw.data.byteOffset, 8);
  w[0] = 40;
  w[2] = w[6]!;
  w[3] = w[7]!;
  expect(longStrings(raw).bytes.length).toBe(LONG.length);
  // Read in place, the encoder sees the same header (node-api hands out a fresh copy per read).
  if (nativeResultsEnabled()) expect(chunk.vector(0, 16).data[0]).toBe(40);
  const encoder = new JsonEncoder(resultColumns(res.columnNames(), res.columnTypes()));
  await encoder.add(chunk);
  const body = JSON.parse(Buffer.concat(await encoder.finish({ executionTimeMs: 0 })).toString());
  expect(body.data).toEqual([[null], [LONG]]);
  chunks.close();
});
