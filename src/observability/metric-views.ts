import type { Counter, Gauge, Histogram } from './metrics.ts';
import type { SvcMetrics } from './svc-metrics.ts';

type Named = { [K in keyof SvcMetrics]: SvcMetrics[K] extends Counter | Gauge ? K : never }[keyof SvcMetrics];
const figure = (m: Counter | Gauge) => ('total' in m ? m.total() : m.value());

/**
 * Body of GET /api/v1/metrics/query-pool. `query_errors` is the real failed-query count; the connection
 * figures, `queries_total` and `query_errors_total` describe a connection pool the service does not expose
 * and stay 0, as the spec says.
 */
export function queryPoolView(m: SvcMetrics) {
  return {
    pool: {
      connections_open: m.dbConnectionsOpen.value(),
      connections_in_use: m.dbConnectionsInUse.value(),
      connections_idle: 0,
      queries_total: m.dbQueries.total(),
      query_errors_total: 0,
      query_requests: m.queryRequests.total(),
      query_errors: m.queryErrors.total(),
      query_timeouts: m.queryTimeouts.total(),
      slow_queries: m.slowQueries.total(),
    },
  };
}

/** Subsystem -> field -> metric: the layout of /api/v1/metrics/endpoints besides `http`. */
const SUBSYSTEMS: Record<string, Record<string, Named>> = {
  ingestion: { records_total: 'ingestRecords', bytes_total: 'ingestBytes', batches_total: 'ingestBatches', errors_total: 'ingestErrors' },
  msgpack: { requests_total: 'msgpackRequests', records_total: 'msgpackRecords', errors_total: 'msgpackErrors' },
  lineprotocol: { requests_total: 'lineprotocolRequests', records_total: 'lineprotocolRecords', errors_total: 'lineprotocolErrors' },
  query: { requests_total: 'queryRequests', errors_total: 'queryErrors', timeouts_total: 'queryTimeouts', slow_total: 'slowQueries' },
  buffer: {
    records_buffered: 'bufferRecords',
    queue_depth: 'bufferQueueDepth',
    flushes_total: 'bufferFlushes',
    records_written_total: 'bufferRecordsWritten',
    flush_failures_total: 'bufferFlushFailures',
    bytes_buffered: 'bufferBytes',
    bytes_limit: 'bufferBytesLimit',
    batches_set_aside_total: 'bufferBatchesSetAside',
    records_set_aside_total: 'bufferRecordsSetAside',
  },
  storage: {
    writes_total: 'storageWrites',
    write_bytes_total: 'storageWriteBytes',
    reads_total: 'storageReads',
    read_bytes_total: 'storageReadBytes',
    errors_total: 'storageErrors',
  },
  wal: {
    records_preserved_total: 'walRecordsPreserved',
    dropped_entries_total: 'walDroppedEntries',
    failed_writes_total: 'walFailedWrites',
    oversized_payloads_total: 'walOversized',
    recovery_total: 'walRecovery',
    recovery_records_total: 'walRecoveryRecords',
  },
  compaction: {
    jobs_total: 'compactionJobs',
    jobs_success_total: 'compactionJobsSuccess',
    jobs_failed_total: 'compactionJobsFailed',
    manifests_recovered_total: 'compactionManifestsRecovered',
  },
  audit: { events_total: 'auditEvents', write_errors_total: 'auditWriteErrors', events_dropped_total: 'auditDropped' },
};

/** Request totals, errors and mean latency in ms of one route group (or of all of them). */
function httpFigures(requests: number, errors: number, sum: number, count: number) {
  return {
    requests_total: requests,
    requests_success: requests - errors,
    requests_error: errors,
    latency_avg_ms: count === 0 ? 0 : Math.round((sum / count) * 1e6) / 1e3,
    latency_count: count,
  };
}

/** Latency sum and count per route group. */
function latencyByGroup(h: Histogram): Map<string, { sum: number; count: number }> {
  const out = new Map<string, { sum: number; count: number }>();
  for (const s of h.samples()) out.set(s.labels.group ?? 'other', { sum: s.sum, count: s.count });
  return out;
}

/**
 * Body of GET /api/v1/metrics/endpoints: counters grouped by subsystem. `http.groups` breaks HTTP figures
 * down by route group (write, query, auth, ...), never by individual route.
 */
export function endpointsView(m: SvcMetrics) {
  const latency = latencyByGroup(m.httpLatency);
  const groups: Record<string, ReturnType<typeof httpFigures>> = {};
  for (const s of m.httpRequests.samples()) {
    const group = s.labels.group;
    if (group === undefined) continue;
    const l = latency.get(group) ?? { sum: 0, count: 0 };
    groups[group] = httpFigures(s.value, m.httpErrors.value({ group }), l.sum, l.count);
  }
  let sum = 0;
  let count = 0;
  for (const l of latency.values()) (sum += l.sum), (count += l.count);
  const subsystems: Record<string, Record<string, number>> = {};
  for (const [name, fields] of Object.entries(SUBSYSTEMS))
    subsystems[name] = Object.fromEntries(Object.entries(fields).map(([field, key]) => [field, figure(m[key])]));
  return { http: { ...httpFigures(m.httpRequests.total(), m.httpErrors.total(), sum, count), groups }, ...subsystems };
}
