/**
 * A crash at each step of a merge (SIGKILL through the test-only SVC_COMPACTION_TEST_CRASH_AT hook)
 * leaves either the inputs or the output registered, never both and never neither; the restart
 * settles the merge manifest and counts it in svc_compaction_manifests_recovered_total.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { startServer } from './helpers/server.ts';
import { dataFiles, flush, manifestFiles, points, rows, waitFor, writeLines } from './compaction-helpers.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const ENV = { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_COMPACTION_HOURLY_MIN_FILES: '2', SVC_COMPACTION_ENABLED: 'false' };
const CASES = [
  ['after_manifest', 4],
  ['after_write', 4],
  ['after_put', 4],
  ['after_swap', 1],
] as const;

describe('compaction crash safety', () => {
  for (const [step, filesAfter] of CASES) {
    test(`killed ${step}: ${filesAfter === 1 ? 'completed' : 'rolled back'} at restart, every row counted once`, async () => {
      const s = await startServer({ keepDir: true, env: { ...ENV, SVC_COMPACTION_TEST_CRASH_AT: step } });
      dirs.push(s.dir);
      for (let k = 0; k < 4; k++) {
        await writeLines(s, 'k', points('m', 100, { offsetMs: k * 1000 }));
        await flush(s);
      }
      const before = await rows(s, 'k', 'SELECT count(*)::INT AS c, sum(v) AS v FROM k.m');
      expect(before).toEqual([{ c: 400, v: 4 * 2475 }]);
      await s.fetch('/api/v1/compaction/trigger', { method: 'POST' });
      await waitFor(() => s.proc.exitCode !== null || s.proc.signalCode !== null, 30_000, 'the injected crash');
      expect(s.proc.signalCode).toBe('SIGKILL');

      const again = await startServer({ dir: s.dir, env: ENV });
      try {
        expect(await rows(again, 'k', 'SELECT count(*)::INT AS c, sum(v) AS v FROM k.m')).toEqual(before);
        const registered = manifestFiles(again.dir, 'k').map((f) => f.path);
        expect(registered.length).toBe(filesAfter);
        // Storage holds exactly the registered files once the reaper has run.
        await waitFor(() => dataFiles(again.dir).filter((f) => f.startsWith('k/')).length === filesAfter, 10_000, 'reaper');
        expect(dataFiles(again.dir).filter((f) => f.startsWith('k/'))).toEqual(registered.sort());
        const metrics = await (await again.fetch('/metrics')).text();
        expect(metrics).toMatch(/svc_compaction_manifests_recovered_total 1\b/);
        // And the partition can still be compacted afterwards.
        if (filesAfter > 1) {
          await again.fetch('/api/v1/compaction/trigger', { method: 'POST' });
          await waitFor(() => manifestFiles(again.dir, 'k').length === 1, 30_000, 'compaction after recovery');
          expect(await rows(again, 'k', 'SELECT count(*)::INT AS c, sum(v) AS v FROM k.m')).toEqual(before);
        }
      } finally {
        await again.stop();
      }
    });
  }
});
