import type { HistoryType } from './metrics-history.ts';
import { readMemory } from './runtime-memory.ts';
import type { SvcMetrics } from './svc-metrics.ts';

const MB = 1024 * 1024;
const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;

/** Metric name prefixes (after `svc_`) that make up the `application` history. */
const APPLICATION_PREFIXES = ['ingest_', 'msgpack_', 'lineprotocol_', 'query_', 'slow_', 'buffer_', 'storage_', 'wal_', 'compaction_', 'audit_'];

/**
 * Builds the collector behind the metrics history: `system` (memory, GC, CPU, in-flight work),
 * `application` (every ingest, query, buffer, storage, WAL, compaction and audit figure, named as in
 * /metrics without the `svc_` prefix) and `api` (HTTP totals and rates). CPU use and request rate are
 * measured over the time since the previous sample.
 */
export function historyCollector(metrics: SvcMetrics): () => Record<HistoryType, Record<string, number>> {
  let prev = { at: performance.now(), cpu: process.cpuUsage(), requests: metrics.httpRequests.total() };
  return () => {
    const at = performance.now();
    const cpu = process.cpuUsage();
    const requests = metrics.httpRequests.total();
    const elapsedMs = Math.max(1, at - prev.at);
    const cpuMs = (cpu.user - prev.cpu.user + cpu.system - prev.cpu.system) / 1000;
    const requestRate = ((requests - prev.requests) * 1000) / elapsedMs;
    prev = { at, cpu, requests };

    const snapshot = metrics.registry.snapshot();
    const application: Record<string, number> = {};
    for (const [name, value] of Object.entries(snapshot)) {
      const short = name.replace(/^svc_/, '');
      if (typeof value === 'number' && APPLICATION_PREFIXES.some((p) => short.startsWith(p))) application[short] = value;
    }

    const mem = readMemory();
    const errors = metrics.httpErrors.total();
    const latency = metrics.httpLatency.samples().reduce((a, s) => ({ sum: a.sum + s.sum, count: a.count + s.count }), { sum: 0, count: 0 });
    return {
      system: {
        goroutines: metrics.goroutines.value(),
        memory_alloc_mb: round(mem.alloc / MB),
        memory_heap_mb: round(mem.heapAlloc / MB),
        memory_sys_mb: round(mem.sys / MB),
        gc_cycles: metrics.gcCycles.total(),
        cpu_percent: round((cpuMs / elapsedMs) * 100),
      },
      application,
      api: {
        http_requests_total: requests,
        http_requests_success: requests - errors,
        http_requests_error: errors,
        http_requests_per_sec: round(requestRate),
        http_latency_avg_us: latency.count === 0 ? 0 : Math.round((latency.sum / latency.count) * 1e6),
        db_connections_open: metrics.dbConnectionsOpen.value(),
        db_connections_in_use: metrics.dbConnectionsInUse.value(),
        db_queries_total: metrics.dbQueries.total(),
      },
    };
  };
}
