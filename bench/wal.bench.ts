/**
 * WAL throughput: encode and decode of parsed line-protocol batches, then `Wal.append` in each
 * sync_mode for a fixed time (tickets released every 100 appends, as flushes would).
 * Run: bun bench/wal.bench.ts [seconds per case]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ColumnBatch } from '../src/ingest/index.ts';
import { parseLineProtocol } from '../src/ingest/index.ts';
import { Logger, createSvcMetrics } from '../src/observability/index.ts';
import { decodeBatches, encodeBatches, Wal, type SyncMode, type WalTicket } from '../src/wal/index.ts';

const seconds = Number(process.argv[2] ?? 1.5);
const quiet = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });

/** Batches parsed from `lines` lines of the reference shape (host of 100 values, region of 10, five floats). */
function parsed(lines: number): ColumnBatch[] {
  const text = Array.from(
    { length: lines },
    (_, i) => `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${i * 0.5},usage_system=3.1,usage_idle=80.2,io_wait=0.4,load=1.25 ${1700000000000000000 + i * 1000}`,
  ).join('\n');
  return parseLineProtocol(text, { precision: 'ns', now: Date.now() * 1000 }).batches;
}

const rows = (b: ColumnBatch[]) => b.reduce((n, x) => n + x.length, 0);
const fmt = (label: string, bytes: number, recs: number, ops: number, ms: number) =>
  console.log(
    `${label.padEnd(28)} ${((bytes / 1e6) / (ms / 1000)).toFixed(0).padStart(6)} MB/s ${((recs / 1e6) / (ms / 1000)).toFixed(2).padStart(6)} M records/s ` +
      `${(ops / (ms / 1000)).toFixed(0).padStart(7)} appends/s`,
  );

function timed(fn: () => number): { ms: number; ops: number; bytes: number } {
  const start = performance.now();
  let ops = 0;
  let bytes = 0;
  while (performance.now() - start < seconds * 1000) {
    bytes += fn();
    ops++;
  }
  return { ms: performance.now() - start, ops, bytes };
}

async function appendCase(mode: SyncMode, batches: ColumnBatch[], label: string): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'wal-bench-'));
  const metrics = createSvcMetrics();
  const wal = await Wal.open({ directory, syncMode: mode, maxSizeBytes: 100 * 1024 * 1024, maxAgeMs: 3_600_000 }, metrics, quiet);
  try {
    const perAppend = rows(batches);
    let held: WalTicket[] = [];
    const start = performance.now();
    let ops = 0;
    while (performance.now() - start < seconds * 1000) {
      held.push(await wal.append('bench', batches));
      if (held.length === 100) {
        for (const t of held) wal.release(t);
        held = [];
        await Bun.sleep(0); // lets the ticker run, as a server's event loop would
      }
      ops++;
    }
    const ms = performance.now() - start;
    const st = wal.status().stats!;
    fmt(`append ${label} ${mode}`, st.total_bytes, ops * perAppend, ops, ms);
    console.log(`${''.padEnd(28)} ${st.total_syncs} syncs, ${st.total_rotations} rotations, ${(st.total_bytes / 1e6).toFixed(0)} MB written`);
    await wal.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const big = parsed(10_000);
const small = parsed(20);
const sample = encodeBatches('bench', big);
console.log(`payload: 10,000 rows = ${(sample.length / 1e6).toFixed(2)} MB encoded (${(sample.length / 10_000).toFixed(0)} bytes/row); 20 rows = ${encodeBatches('bench', small).length} bytes`);

let r = timed(() => encodeBatches('bench', big).length);
fmt('encode 10k rows', r.bytes, r.ops * 10_000, r.ops, r.ms);
r = timed(() => (decodeBatches(sample), sample.length));
fmt('decode 10k rows', r.bytes, r.ops * 10_000, r.ops, r.ms);

for (const mode of ['async', 'fdatasync', 'fsync'] as const) await appendCase(mode, big, '10k rows');
for (const mode of ['async', 'fdatasync', 'fsync'] as const) await appendCase(mode, small, '20 rows');
