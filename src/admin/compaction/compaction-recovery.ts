/**
 * Start-up settlement of merges interrupted by a crash. Runs before the manifest is reconciled with
 * storage: an output that was put but never swapped in would otherwise be registered next to its
 * inputs, counting their rows twice.
 */
import { rm } from 'node:fs/promises';
import { spillRoot } from './merge-engine.ts';
import type { FileManifestStore } from '../../catalog/index.ts';
import { messageOf, StartupError } from '../../lib/errors.ts';
import type { Logger, SvcMetrics } from '../../observability/index.ts';
import type { ObjectStore } from '../../storage/index.ts';
import type { CompactionStore } from './compaction-store.ts';

/** How many interrupted merges were completed (swap had happened) and rolled back (it had not). */
export interface RecoveryResult {
  completed: number;
  rolledBack: number;
}

/**
 * Settles every leftover merge manifest: when the file manifest lists the output, the swap committed
 * (inputs are already tombstoned) and only the manifest is cleared; otherwise the output object, if
 * any, is deleted and the inputs stay. Also removes the spill folder of dead merges.
 */
export async function recoverCompactions(deps: {
  jobs: CompactionStore;
  manifest: FileManifestStore;
  store: ObjectStore;
  metrics: SvcMetrics;
  logger: Logger;
  tempDirectory: string;
}): Promise<RecoveryResult> {
  const { jobs, manifest, store, metrics, logger } = deps;
  const result: RecoveryResult = { completed: 0, rolledBack: 0 };
  for (const m of jobs.pending()) {
    try {
      if (manifest.get(m.output)) {
        result.completed++;
        logger.info('interrupted compaction completed', { job_id: m.jobId, output: m.output, inputs: m.inputs.length });
      } else {
        await store.delete(m.output);
        result.rolledBack++;
        logger.info('interrupted compaction rolled back', { job_id: m.jobId, output: m.output, inputs: m.inputs.length });
      }
      jobs.finish(m.id);
      metrics.compactionManifestsRecovered.inc();
    } catch (err) {
      throw new StartupError('recovery', `cannot recover interrupted compaction ${m.id}: ${messageOf(err)}`);
    }
  }
  await rm(spillRoot(deps.tempDirectory), { recursive: true, force: true }).catch(() => undefined);
  return result;
}
