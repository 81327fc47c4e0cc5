/**
 * ingest.flush_worker_nice: the flush worker threads run that many nice values below the event loop (Linux), the event loop
 * and every other thread of the server stay at the priority the process started with, and the rows
 * flushed by the lowered workers are all in Parquet; 0 leaves the workers at the event loop's priority.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { pack } from 'msgpackr';
import { queryFiles } from './helpers/parquet.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const started: TestServer[] = [];
afterEach(async () => {
  while (started.length) await started.pop()!.cleanup();
});

/** Name and nice value of every thread of `pid`. */
function threadsOf(pid: number): { tid: number; name: string; nice: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((t) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the name: state is field 3, nice field 19 (proc(5)).
      return [{ tid: Number(t), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) }];
    } catch {
      return []; // the thread ended between the listing and the read
    }
  });
}

/** Writes `batches` bodies of 1,000 rows and flushes them, so both flush workers have started. */
async function writeAndFlush(s: TestServer, batches: number): Promise<void> {
  for (let b = 0; b < batches; b++) {
    const t0 = 1_700_000_000_000 + b * 1000;
    const body = pack({ m: 'cpu', columns: { time: Array.from({ length: 1000 }, (_, i) => t0 + i), host: Array.from({ length: 1000 }, (_, i) => `h${i % 7}`), v: Array.from({ length: 1000 }, (_, i) => i + 0.5) } });
    const res = await s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'x-svc-database': 'prio' }, body });
    expect(res.status).toBe(204);
  }
  const flushed = await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  expect(flushed.status).toBe(200);
}

describe.skipIf(process.platform !== 'linux')('ingest.flush_worker_nice', () => {
  test('by default the flush workers run 5 nice values below the event loop, the event loop and the rest as started; every row is flushed', async () => {
    // Buffers of 1,000 rows: four flushes, so both workers take a job.
    const s = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', SVC_INGEST_MAX_BUFFER_SIZE: '1000' } });
    started.push(s);
    await writeAndFlush(s, 4);
    const threads = threadsOf(s.proc.pid);
    const main = threads.find((t) => t.tid === s.proc.pid)!;
    const base = Number(readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    expect(main.nice).toBe(base);
    const lowered = threads.filter((t) => t.nice !== base);
    // Exactly the two flush workers (Bun names a Worker's thread "Worker"); nothing else moved.
    expect(lowered.map((t) => [t.name, t.nice])).toEqual([
      ['Worker', Math.min(19, base + 5)],
      ['Worker', Math.min(19, base + 5)],
    ]);
    const rows = await queryFiles(s.dir, 'SELECT count(*) AS c FROM $files(prio/**/*.parquet)');
    expect(Number(rows[0]!.c)).toBe(4000);
  });

  test('0 leaves the flush workers at the priority of the event loop', async () => {
    const s = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', SVC_INGEST_MAX_BUFFER_SIZE: '1000', SVC_INGEST_FLUSH_WORKER_NICE: '0' } });
    started.push(s);
    await writeAndFlush(s, 4);
    const threads = threadsOf(s.proc.pid);
    const main = threads.find((t) => t.tid === s.proc.pid)!;
    expect(threads.filter((t) => t.nice !== main.nice)).toEqual([]);
    expect(threads.filter((t) => t.name === 'Worker').length).toBeGreaterThanOrEqual(2);
  });
});
