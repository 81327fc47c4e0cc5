import { expect, test } from 'bun:test';
import { memoryConnection } from '../../tests/helpers/duckdb.ts';
import { STRING_SLACK, nativeResultsEnabled, resultChunks } from './result-chunks.ts';

const conn = await memoryConnection();

const SQL = `SELECT i::DOUBLE AS x, CASE WHEN i % 3 = 0 THEN NULL WHEN i % 3 = 1 THEN 'short' || i ELSE 'a string stored apart ' || i END AS s FROM range(5000) t(i)`;

test('results are read in place exactly on Linux (a C reader that failed to load fails here, never skips)', () => {
  expect(nativeResultsEnabled()).toBe(process.platform === 'linux');
});

test('values, validity and strings of every chunk match node-api', async () => {
  const result = await conn.run(SQL);
  const chunks = resultChunks(result, 2);
  expect(chunks.count).toBe(3);
  let row = 0;
  for (let c = 0; c < chunks.count; c++) {
    const chunk = chunks.chunk(c);
    const n = chunk.rowCount;
    const xs = new Float64Array(n);
    chunk.copyValues(0, 8, new Uint8Array(xs.buffer), 0);
    expect([...xs]).toEqual(chunk.node.getColumnValues(0) as number[]);
    const total = chunk.stringTotal(1);
    const offsets = new Int32Array(n + 1);
    const data = new Uint8Array(total + STRING_SLACK);
    expect(chunk.copyStrings(1, offsets, 0, 0, data)).toBe(total);
    const strings = chunk.node.getColumnValues(1);
    const validity = chunk.validity(1)!;
    for (let i = 0; i < n; i++) {
      expect((validity[i >> 3]! & (1 << (i & 7))) !== 0).toBe(strings[i] !== null);
      expect(new TextDecoder().decode(data.subarray(offsets[i], offsets[i + 1]))).toBe((strings[i] as string | null) ?? '');
    }
    row += n;
    chunk.release();
    // A released chunk refuses reads instead of touching freed memory.
    if (nativeResultsEnabled()) expect(() => chunk.vector(0, 8)).toThrow(/after release/);
  }
  expect(row).toBe(5000);
  chunks.close();
});

test('close releases the chunks never released', async () => {
  const chunks = resultChunks(await conn.run(SQL), 2);
  const held = [chunks.chunk(0), chunks.chunk(1)];
  chunks.close();
  if (nativeResultsEnabled()) for (const c of held) expect(() => c.vector(0, 8)).toThrow(/after release/);
});

test('views of a chunk are emptied when it is released, never left on freed memory', async () => {
  const chunks = resultChunks(await conn.run(SQL), 2);
  const chunk = chunks.chunk(0);
  const values = chunk.vector(0, 8);
  const validity = chunk.validity(1)!;
  expect(values.data.length).toBe(chunk.rowCount * 8);
  expect(validity.length).toBeGreaterThan(0);
  chunk.release();
  chunks.close();
  if (nativeResultsEnabled()) {
    expect(values.data.length).toBe(0);
    expect(validity.length).toBe(0);
  }
});
