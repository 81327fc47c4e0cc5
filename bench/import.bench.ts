/**
 * Import benchmark (`bun run bench:import`): rows/s of POST /api/v1/import/csv and /import/parquet on a
 * running server (upload over loopback, staging, hourly files, manifest commit: the whole request),
 * next to DuckDB's own `read_csv` / `read_parquet` COPYed into one Parquet file on the same file, in a
 * fresh in-process instance. Target: svc at least half of DuckDB's rate, and the 1M-row `day` CSV (the
 * shape tests/import-csv.test.ts checks for its content) in well under 15 s on two shared cores.
 *
 * Shapes: `day` = 1M rows over 24 hours (24 files), `sparse` = 1M rows one per second (278 files:
 * per-file costs dominate). Also printed: a minimal hand-written JS CSV parse (no quoting, no type
 * inference, no output) as the floor of the alternative to DuckDB's parser.
 * Env: BENCH_ROWS (default 1,000,000), BENCH_REPEATS (default 3; best run is printed, the machine is shared),
 * BENCH_SHAPES (day,sparse), BENCH_EXECUTABLE (run e.g. dist/svc instead of `bun src/main.ts`),
 * BENCH_COMPARE (a second executable, e.g. a script running an older tree's src/main.ts: measured right
 * after svc on the same files, so a change is compared under the same load on a shared machine).
 * Each line shows the best run and the median; svc lines add the server's own stage/commit split (best run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../src/duckdb/index.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const SHAPES = (process.env.BENCH_SHAPES ?? 'day,sparse').split(',');
const T0 = Date.UTC(2024, 0, 1);

/** CSV text: time (RFC 3339), host (20 values), region, cpu float, mem int, ok bool; `stepMs` apart. */
function csvText(rows: number, stepMs: number): string {
  const parts = ['time,host,region,cpu,mem,ok\n'];
  for (let i = 0; i < rows; i++)
    parts.push(`${new Date(T0 + Math.floor(i * stepMs)).toISOString()},host-${i % 20},${i % 3 === 0 ? 'eu' : 'us'},${(i % 1000) / 10 + 0.25},${(i * 7) % 100000},${i % 2 === 0}\n`);
  return parts.join('');
}

/** Seconds of each of REPEATS runs of `fn`, sorted (first = best). */
async function best(fn: () => Promise<void>): Promise<number[]> {
  const runs: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t = performance.now();
    await fn();
    runs.push((performance.now() - t) / 1000);
  }
  return runs.sort((a, b) => a - b);
}

/** Seconds DuckDB takes to COPY `source` into one Parquet file (fresh instance per run, like a new process). */
async function duckdbCopy(source: string, out: string): Promise<number[]> {
  return best(async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(`COPY (SELECT * FROM ${source}) TO '${out}' (FORMAT parquet, COMPRESSION snappy)`);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
}

/** Seconds svc takes to import `file` (whole HTTP request; checks the row count) and the server's split of the best run. */
async function svcImport(server: TestServer, path: string, file: string, contentType: string): Promise<{ runs: number[]; split: string }> {
  const splits: { s: number; split: string }[] = [];
  const runs = await best(async () => {
    const t = performance.now();
    const res = await server.fetch(`${path}&measurement=m${measurementSerial++}`, { method: 'POST', headers: { 'content-type': contentType }, body: Bun.file(file) });
    const body = (await res.json()) as { result?: { rows_imported: number }; error?: string };
    if (res.status !== 200 || body.result?.rows_imported !== ROWS) throw new Error(`import failed: ${res.status} ${JSON.stringify(body)}`);
    splits.push({ s: (performance.now() - t) / 1000, split: lastSplit(server.output()) });
  });
  return { runs, split: splits.sort((a, b) => a.s - b.s)[0]!.split };
}

let measurementSerial = 0;

/** The `*_ms` fields of the server's last "import committed" log line (text or JSON logs). */
function lastSplit(log: string): string {
  const line = log.split('\n').findLast((l) => l.includes('import committed')) ?? '';
  return [...line.matchAll(/"?(\w+)_ms"?[=:](\d+)/g)].map((m) => `${m[1]} ${m[2]}`).join(', ');
}

/** Seconds of the cheapest JS CSV parse imaginable: split lines and fields, Date.parse and Number. */
async function jsParseFloor(file: string): Promise<number> {
  const bytes = await Bun.file(file).bytes();
  const runs = await best(async () => {
    const text = new TextDecoder().decode(bytes);
    const time = new Float64Array(ROWS);
    const num = new Float64Array(ROWS);
    let row = 0;
    for (let pos = text.indexOf('\n') + 1; pos < text.length && row < ROWS; row++) {
      const end = text.indexOf('\n', pos);
      const comma = text.indexOf(',', pos);
      time[row] = Date.parse(text.slice(pos, comma));
      let a = comma;
      for (let k = 0; k < 3; k++) a = text.indexOf(',', a + 1);
      num[row] = Number(text.slice(a + 1, text.indexOf(',', a + 1)));
      pos = end + 1;
    }
  });
  return runs[0]!;
}

const rate = (s: number) => `${Math.round(ROWS / s).toLocaleString('en-US').padStart(11)} rows/s  (${s.toFixed(2)} s)`;
const median = (runs: number[]) => runs[Math.floor(runs.length / 2)]!;
/** Best and median rate, and (against DuckDB's best and median) the share of DuckDB's rate. */
const line = (runs: number[], duck?: number[]) =>
  `${rate(runs[0]!)}, median ${Math.round(ROWS / median(runs)).toLocaleString('en-US')}` +
  (duck ? `  = ${Math.round((100 * duck[0]!) / runs[0]!)}% of DuckDB (median ${Math.round((100 * median(duck)) / median(runs))}%)` : '');

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-import-'));
const server = await startServer({ executable: process.env.BENCH_EXECUTABLE });
const compare = process.env.BENCH_COMPARE ? await startServer({ executable: process.env.BENCH_COMPARE }) : null;
try {
  for (const shape of SHAPES) {
    const stepMs = shape === 'sparse' ? 1000 : 86_400_000 / ROWS;
    const csv = join(dir, `${shape}.csv`);
    const pq = join(dir, `${shape}.parquet`);
    await Bun.write(csv, csvText(ROWS, stepMs));
    await duckdbCopy(`read_csv('${csv}')`, pq);
    const mb = (Bun.file(csv).size / 1e6).toFixed(0);
    console.log(`\n${shape}: ${ROWS.toLocaleString('en-US')} rows, ${shape === 'sparse' ? Math.ceil((ROWS * stepMs) / 3.6e6) : 24} hours, CSV ${mb} MB, best of ${REPEATS}`);
    const duckCsv = await duckdbCopy(`read_csv('${csv}')`, join(dir, 'out.parquet'));
    const svcCsv = await svcImport(server, '/api/v1/import/csv?db=bench', csv, 'text/csv');
    const cmpCsv = compare && (await svcImport(compare, '/api/v1/import/csv?db=bench', csv, 'text/csv'));
    const duckPq = await duckdbCopy(`read_parquet('${pq}')`, join(dir, 'out.parquet'));
    const svcPq = await svcImport(server, '/api/v1/import/parquet?db=benchpq', pq, 'application/octet-stream');
    const cmpPq = compare && (await svcImport(compare, '/api/v1/import/parquet?db=benchpq', pq, 'application/octet-stream'));
    console.log(`  CSV      DuckDB read_csv -> Parquet   ${line(duckCsv)}`);
    console.log(`           svc POST /import/csv         ${line(svcCsv.runs, duckCsv)}  [${svcCsv.split}]`);
    if (cmpCsv) console.log(`           compared svc                 ${line(cmpCsv.runs, duckCsv)}  [${cmpCsv.split}]`);
    console.log(`  Parquet  DuckDB read_parquet -> Parquet ${line(duckPq)}`);
    console.log(`           svc POST /import/parquet     ${line(svcPq.runs, duckPq)}  [${svcPq.split}]`);
    if (cmpPq) console.log(`           compared svc                 ${line(cmpPq.runs, duckPq)}  [${cmpPq.split}]`);
    if (shape === SHAPES[0]) console.log(`  (floor of a JS CSV parser: split + Date.parse + Number, nothing typed or stored: ${rate(await jsParseFloor(csv)).trim()})`);
  }
} finally {
  await server.cleanup();
  await compare?.cleanup();
  rmSync(dir, { recursive: true, force: true });
}
