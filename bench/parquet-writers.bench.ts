/**
 * `bun bench/parquet-writers.bench.ts`: the two Parquet writers the stack allows, on the ingest-bench
 * shape (time, host of 100, region of 10, five float fields), one sorted hour of rows written with
 * snappy: hyparquet-writer (pure JS, on the main thread), DuckDB's COPY fed from the typed columns
 * (svc's general path) and svc's direct writer (its flush path for one sorted hour). Best of 5 each.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { DuckDBInstance } from '../src/duckdb/index.ts';
import type { Column, ColumnBatch } from '../src/ingest/index.ts';
import { writeHourFiles } from '../src/parquet/index.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const T0 = Date.UTC(2024, 0, 1) * 1000;
const FIELDS = ['usage_user', 'usage_system', 'usage_idle', 'io_wait', 'load'];

const time = new Float64Array(ROWS);
const hosts: string[] = new Array(ROWS);
const regions: string[] = new Array(ROWS);
const fields = FIELDS.map(() => new Float64Array(ROWS));
for (let i = 0; i < ROWS; i++) {
  time[i] = T0 + Math.floor((i * 3_599_000_000) / ROWS);
  hosts[i] = `host_${i % 100}`;
  regions[i] = `region_${i % 10}`;
  for (const f of fields) f[i] = Math.random() * 100 + 0.5;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-writers-'));
const best = async (fn: () => Promise<void> | void) => {
  let min = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
};

const conn = await (await DuckDBInstance.create(':memory:')).connect();
await conn.run('SET threads = 1');
let n = 0;
const svcWrite = (engine: 'auto' | 'duckdb') => async () => {
  const columns = new Map<string, Column>([
    ['host', { type: 'string', values: hosts, valid: null, tag: true }],
    ['region', { type: 'string', values: regions, valid: null, tag: true }],
    ...FIELDS.map((name, k) => [name, { type: 'float64', values: fields[k]!, valid: null, tag: false }] as [string, Column]),
  ]);
  const batch: ColumnBatch = { measurement: 'cpu', length: ROWS, time, columns };
  await writeHourFiles(conn, [batch], { compression: 'snappy', table: `w${n}`, pathFor: () => join(dir, `svc-${n++}.parquet`), engine });
};
const duckdbMs = await best(svcWrite('duckdb'));
const directMs = await best(svcWrite('auto'));

// hyparquet-writer last: its allocation-heavy runs left the heap and JIT in a state that slowed whatever ran after them.
const hyparquetMs = await best(() => {
  const micros = new BigInt64Array(ROWS);
  for (let i = 0; i < ROWS; i++) micros[i] = BigInt(time[i]!);
  const buf = parquetWriteBuffer({
    columnData: [
      { name: 'time', data: micros, type: 'INT64' },
      { name: 'host', data: hosts, type: 'STRING' },
      { name: 'region', data: regions, type: 'STRING' },
      ...FIELDS.map((name, k) => ({ name, data: fields[k]!, type: 'DOUBLE' as const })),
    ],
  });
  writeFileSync(join(dir, 'hyparquet.parquet'), new Uint8Array(buf));
});

const rate = (ms: number) => `${((ROWS / ms) * 1000 / 1e6).toFixed(2)}M rows/s`;
console.log(`parquet writers, ${ROWS.toLocaleString()} rows, snappy, best of 5`);
console.log(`  hyparquet-writer  ${hyparquetMs.toFixed(0).padStart(6)} ms  ${rate(hyparquetMs)}`);
console.log(`  DuckDB COPY       ${duckdbMs.toFixed(0).padStart(6)} ms  ${rate(duckdbMs)}  = ${(hyparquetMs / duckdbMs).toFixed(1)}x hyparquet-writer`);
console.log(`  svc direct writer ${directMs.toFixed(0).padStart(5)} ms  ${rate(directMs)}  = ${(hyparquetMs / directMs).toFixed(1)}x hyparquet-writer, ${(duckdbMs / directMs).toFixed(1)}x DuckDB COPY`);
rmSync(dir, { recursive: true, force: true });
