export { Logger, LOG_LEVELS, type LogLevel, type LogEntry } from './logger.ts';
export { MetricsRegistry, Counter, Gauge, Histogram, type Labels, type Metric } from './metrics.ts';
export { createSvcMetrics, type SvcMetrics } from './svc-metrics.ts';
