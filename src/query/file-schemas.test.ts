import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../duckdb/index.ts';
import { sameFlatSchema } from './file-schemas.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-schemas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('only files with the same columns, order and types count as one schema', async () => {
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  const files: Record<string, string> = {
    a: 'SELECT 1::INTEGER AS x, 2.5::DOUBLE AS y',
    same: 'SELECT 7::INTEGER AS x, 0.5::DOUBLE AS y',
    extra: "SELECT 1::INTEGER AS x, 2.5::DOUBLE AS y, 'z' AS z",
    wider: 'SELECT 1::BIGINT AS x, 2.5::DOUBLE AS y',
    order: 'SELECT 2.5::DOUBLE AS y, 1::INTEGER AS x',
    nested: 'SELECT 1::INTEGER AS x, {k: 1} AS y',
  };
  const path = (k: string) => join(dir, `${k}.parquet`);
  for (const [k, sql] of Object.entries(files)) await conn.run(`COPY (${sql}) TO '${path(k)}' (FORMAT parquet)`);
  expect(await sameFlatSchema(conn, [path('a'), path('same')])).toBe(true);
  for (const other of ['extra', 'wider', 'order', 'nested']) expect(await sameFlatSchema(conn, [path('a'), path(other)])).toBe(false);
  expect(await sameFlatSchema(conn, [path('nested'), path('nested')])).toBe(false);
  expect(await sameFlatSchema(conn, [path('a'), join(dir, 'missing.parquet')])).toBe(false);
  conn.closeSync();
});
