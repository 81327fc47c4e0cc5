/**
 * The WAL under a real crash: a server with the WAL on takes sustained line-protocol writes from
 * several concurrent clients and is SIGKILLed mid-stream, with nothing flushed (buffers would wait ten
 * minutes). After a restart every point that got a 2xx is stored exactly once. Then the restarted
 * server is killed again before it flushes the replayed rows, so replay itself is crash-tested.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataFiles, queryFiles } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const DB = 'crashdb';
const M = 'crash';
const LOOPS = 4;
const POINTS_PER_WRITE = 20;
const T0_US = 1_700_000_000_000_000;
const env = { SVC_WAL_ENABLED: 'true', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_INGEST_MAX_BUFFER_SIZE: '10000000' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Writes from `LOOPS` concurrent clients until stopped; ids of acknowledged points land in `acked`. */
function writeLoops(s: TestServer, firstId: number, acked: Set<number>) {
  let next = firstId;
  let running = true;
  let writes = 0;
  const loop = async (loopNo: number) => {
    while (running) {
      const ids = Array.from({ length: POINTS_PER_WRITE }, () => next++);
      const body = ids.map((id) => `${M},loop=l${loopNo} v=${id * 0.5},id=${id}i ${T0_US + id}`).join('\n');
      const res = await s
        .fetch('/api/v1/write/line-protocol?precision=us', { method: 'POST', headers: { 'x-svc-database': DB }, body })
        .catch(() => null); // the kill lands mid-request: not acknowledged
      if (!res) return;
      if (res.status >= 200 && res.status < 300) {
        for (const id of ids) acked.add(id);
        writes++;
      } else if (s.proc.exitCode === null) throw new Error(`write failed with ${res.status}: ${await res.text()}`);
    }
  };
  const done = Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));
  return {
    get writes() {
      return writes;
    },
    get next() {
      return next;
    },
    stop: async () => {
      running = false;
      await done;
    },
    done,
  };
}

/** Stored ids, through the query API when it answers, else straight from the Parquet files. */
async function storedIds(s: TestServer): Promise<number[]> {
  const q = await json(s, 'POST', '/api/v1/query', { sql: `SELECT id FROM ${DB}.${M}` });
  if (q.status === 200 && Array.isArray(q.body?.data)) return q.body.data.map((r: unknown) => Number(Array.isArray(r) ? r[0] : (r as { id: unknown }).id));
  if (!dataFiles(s.dir).some((f) => f.startsWith(`${DB}/`))) return [];
  const rows = await queryFiles(s.dir, `SELECT id FROM $files(${DB}/${M}/**/*.parquet)`);
  return rows.map((r) => Number(r.id));
}

function expectExactlyOnce(stored: number[], acked: Set<number>) {
  const seen = new Map<number, number>();
  for (const id of stored) seen.set(id, (seen.get(id) ?? 0) + 1);
  const missing = [...acked].filter((id) => !seen.has(id));
  const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  expect({ missing: missing.length, twice: twice.length }).toEqual({ missing: 0, twice: 0 });
}

const flush = async (s: TestServer) => expect((await json(s, 'POST', '/api/v1/write/line-protocol/flush')).status).toBe(200);

describe('WAL crash recovery', () => {
  test(
    'every acknowledged point survives SIGKILL mid-stream, and a second kill before the replayed rows are flushed',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-wal-crash-'));
      dirs.push(dir);
      const acked = new Set<number>();

      // Life 1: sustained writes, killed mid-stream.
      let s = await startServer({ dir, env });
      const first = writeLoops(s, 0, acked);
      while (first.writes < 400) {
        if (s.proc.exitCode !== null) throw new Error(`server died:\n${s.output()}`);
        await Bun.sleep(5);
      }
      await s.kill();
      await first.stop();
      expect(dataFiles(dir)).toEqual([]); // nothing was flushed: every row comes from the WAL

      // Life 2: replays, takes more writes, and is killed before anything is flushed.
      s = await startServer({ dir, env });
      const status = await json(s, 'GET', '/api/wal/status');
      expect(status.body.recovery.records).toBeGreaterThanOrEqual(acked.size);
      expect(status.body.recovery.dropped).toBeLessThanOrEqual(1); // at most the entry being written at the kill
      const second = writeLoops(s, first.next, acked);
      const target = first.writes + 100;
      while (second.writes + first.writes < target) await Bun.sleep(5);
      await s.kill();
      await second.stop();
      expect(dataFiles(dir)).toEqual([]);

      // Life 3: replays both files again, flushes, and every acknowledged id is there exactly once.
      s = await startServer({ dir, env });
      try {
        await flush(s);
        expectExactlyOnce(await storedIds(s), acked);
        // The flush released every replayed entry, so the replayed files are retired.
        const files = await json(s, 'GET', '/api/wal/files');
        expect(files.body.recovered.length).toBeGreaterThanOrEqual(2);
        expect(files.body.active.filter((f: { state: string }) => f.state === 'replayed')).toEqual([]);
      } finally {
        expect(await s.stop()).toBe(0);
      }

      // Life 4: nothing left to replay, nothing duplicated.
      s = await startServer({ dir, env });
      try {
        expect((await json(s, 'GET', '/api/wal/status')).body.recovery.records).toBe(0);
        await flush(s);
        expectExactlyOnce(await storedIds(s), acked);
      } finally {
        await s.stop();
      }
    },
    120_000,
  );
});
