import { GaugeSampler } from './gauge-sampler.ts';
import { GcCounter } from './gc-counter.ts';
import { historyCollector } from './history-collector.ts';
import type { Logger } from './logger.ts';
import { MetricsHistory } from './metrics-history.ts';
import type { SvcMetrics } from './svc-metrics.ts';

/** The timer-driven parts of observability, started together and stopped together. */
export interface MetricsRuntime {
  /** Counts GC cycles into svc_gc_cycles_total. */
  gc: GcCounter;
  /** Once-per-second gauges: owners add theirs, e.g. `sampler.add(metrics.bufferRecords, () => buffer.records())`. */
  sampler: GaugeSampler;
  /** The history behind /api/v1/metrics/timeseries/:type. */
  history: MetricsHistory;
  stop(): void;
}

/** Starts the GC counter, the one-second gauge sampler and the metrics history (config section [metrics]). */
export function startMetricsRuntime(
  metrics: SvcMetrics,
  config: { timeseries_interval_seconds: number; timeseries_retention_minutes: number },
  logger: Logger,
): MetricsRuntime {
  const gc = new GcCounter(metrics.gcCycles);
  const sampler = new GaugeSampler(1000, logger.child({ component: 'metrics' }));
  const history = new MetricsHistory(
    { intervalSeconds: config.timeseries_interval_seconds, retentionMinutes: config.timeseries_retention_minutes },
    historyCollector(metrics),
  );
  gc.start();
  sampler.start();
  history.start();
  return {
    gc,
    sampler,
    history,
    stop() {
      history.stop();
      sampler.stop();
      gc.stop();
    },
  };
}
