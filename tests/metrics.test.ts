/**
 * GET /metrics and the /api/v1/metrics* routes against a real server: the exposition parses, every
 * metric the spec names exists with its type, a known workload moves the HTTP figures by exactly its
 * size, the always-zero metrics stay 0, and every JSON route answers good and bad parameters.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseExposition, sampleValue, type Family } from './helpers/prometheus.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor } from './helpers/until.ts';

const COUNTERS = [
  'svc_ingest_records_total', 'svc_ingest_bytes_total', 'svc_ingest_batches_total', 'svc_ingest_errors_total',
  'svc_http_requests_total', 'svc_http_requests_error_total',
  'svc_query_requests_total', 'svc_query_errors_total', 'svc_query_timeouts_total', 'svc_slow_queries_total',
  'svc_storage_writes_total', 'svc_storage_write_bytes_total', 'svc_storage_reads_total', 'svc_storage_read_bytes_total', 'svc_storage_errors_total',
  'svc_buffer_flushes_total', 'svc_buffer_records_written_total', 'svc_buffer_flush_failures_total',
  'svc_wal_records_preserved_total', 'svc_wal_dropped_entries_total', 'svc_wal_failed_writes_total', 'svc_wal_oversized_payloads_total',
  'svc_wal_recovery_total', 'svc_wal_recovery_records_total',
  'svc_compaction_jobs_total', 'svc_compaction_jobs_success_total', 'svc_compaction_jobs_failed_total', 'svc_compaction_manifests_recovered_total',
  'svc_gc_cycles_total', 'svc_audit_events_total', 'svc_audit_write_errors_total', 'svc_audit_events_dropped_total',
  'svc_db_queries_total', 'svc_replication_sequence_gaps_total', 'svc_decomp_buffer_discards_total',
];
const GAUGES = [
  'svc_buffer_records_buffered', 'svc_buffer_queue_depth', 'svc_memory_alloc_bytes', 'svc_memory_heap_alloc_bytes', 'svc_memory_sys_bytes',
  'svc_goroutines', 'svc_db_connections_open', 'svc_db_connections_in_use',
];
const ALWAYS_ZERO = ['svc_db_connections_open', 'svc_db_connections_in_use', 'svc_db_queries_total', 'svc_replication_sequence_gaps_total', 'svc_decomp_buffer_discards_total'];

let server: TestServer;

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(server.url + '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4');
  return parseExposition(await res.text());
}

beforeAll(async () => {
  // Buffers flush only on request, so the buffered gauge can be observed.
  server = await startServer({ env: { SVC_METRICS_TIMESERIES_INTERVAL_SECONDS: '1', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
});
afterAll(async () => {
  await server?.cleanup();
});

describe('GET /metrics', () => {
  test('parses, and every metric the spec names exists with its type', async () => {
    const families = await scrape();
    for (const name of COUNTERS) expect([name, families.get(name)?.type]).toEqual([name, 'counter']);
    for (const name of GAUGES) expect([name, families.get(name)?.type]).toEqual([name, 'gauge']);
    expect(families.get('svc_http_latency_seconds')?.type).toBe('histogram');
    for (const prefix of ['svc_msgpack_', 'svc_lineprotocol_']) expect([...families.keys()].some((n) => n.startsWith(prefix))).toBe(true);
    for (const f of families.values()) expect(f.samples.length > 0 || f.type === 'histogram').toBe(true);
  });

  test('a known workload moves the HTTP figures by exactly its size; the always-zero ones stay 0', async () => {
    const before = await scrape();
    const N = 7;
    for (let i = 0; i < N; i++) expect((await fetch(server.url + '/health')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await server.fetch('/api/v1/nothing_here')).status).toBe(404);
    const after = await scrape();
    const delta = (sample: string, labels: Record<string, string> = {}) => sampleValue(after, sample, labels) - sampleValue(before, sample, labels);
    expect(delta('svc_http_requests_total', { group: 'health' })).toBe(N);
    expect(delta('svc_http_requests_error_total', { group: 'health' })).toBe(0);
    expect(delta('svc_http_latency_seconds_count', { group: 'health' })).toBe(N);
    expect(delta('svc_http_latency_seconds_bucket', { group: 'health', le: '+Inf' })).toBe(N);
    expect(delta('svc_http_requests_total', { group: 'nothing_here' })).toBe(3);
    expect(delta('svc_http_requests_error_total', { group: 'nothing_here' })).toBe(3);
    // The first scrape itself is counted (observability group) once it has finished.
    expect(delta('svc_http_requests_total', { group: 'observability' })).toBe(1);
    for (const name of ALWAYS_ZERO) expect([name, sampleValue(after, name)]).toEqual([name, 0]);
  });

  test('memory, GC and in-flight figures come from the runtime', async () => {
    const families = await scrape();
    expect(sampleValue(families, 'svc_memory_alloc_bytes')).toBeGreaterThan(1e5);
    expect(sampleValue(families, 'svc_memory_heap_alloc_bytes')).toBeGreaterThanOrEqual(sampleValue(families, 'svc_memory_alloc_bytes') * 0.5);
    expect(sampleValue(families, 'svc_memory_sys_bytes')).toBeGreaterThan(sampleValue(families, 'svc_memory_alloc_bytes'));
    // The scrape itself is in flight while it is rendered.
    expect(sampleValue(families, 'svc_goroutines')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'svc_gc_cycles_total')).toBeGreaterThanOrEqual(0);
  });

  test('writes and a flush move the ingest, buffer and storage figures by exactly their size', async () => {
    const before = await scrape();
    const lines = 'obs_test,host=a value=1 1700000000000000000\nobs_test,host=b value=2 1700000000000000000\nobs_test,host=c value=3 1700003600000000000\n';
    const res = await server.fetch('/api/v1/write/line-protocol', { method: 'POST', body: lines, headers: { 'x-svc-database': 'obs' } });
    expect(res.status).toBe(204);
    // svc_buffer_records_buffered is sampled once per second: wait for a sample taken since the write.
    const buffered = (m: Map<string, Family>) => sampleValue(m, 'svc_buffer_records_buffered');
    const sampleAfter = (what: string, previous: Map<string, Family>) =>
      waitFor(what, async () => {
        const now = await scrape();
        return buffered(now) !== buffered(previous) ? now : null;
      });
    const written = await sampleAfter('a buffer sample after the write', before);
    const delta = (now: Map<string, Family>, name: string) => sampleValue(now, name) - sampleValue(before, name);
    expect(delta(written, 'svc_ingest_records_total')).toBe(3);
    expect(delta(written, 'svc_ingest_batches_total')).toBe(1);
    expect(delta(written, 'svc_ingest_bytes_total')).toBe(lines.length);
    expect(delta(written, 'svc_ingest_errors_total')).toBe(0);
    expect(delta(written, 'svc_lineprotocol_requests_total')).toBe(1);
    expect(delta(written, 'svc_lineprotocol_records_total')).toBe(3);
    expect(sampleValue(written, 'svc_buffer_records_buffered')).toBe(3);

    const bad = await server.fetch('/api/v1/write/line-protocol', { method: 'POST', body: 'obs_test value=\n', headers: { 'x-svc-database': 'obs' } });
    expect(bad.status).toBe(400);
    const refused = await scrape();
    expect(delta(refused, 'svc_ingest_errors_total')).toBe(1);
    expect(delta(refused, 'svc_lineprotocol_errors_total')).toBe(1);
    expect(delta(refused, 'svc_ingest_records_total')).toBe(3);

    expect((await server.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
    const flushed = await sampleAfter('a buffer sample after the flush', written);
    expect(sampleValue(flushed, 'svc_buffer_records_buffered')).toBe(0);
    expect(delta(flushed, 'svc_buffer_records_written_total')).toBe(3);
    expect(delta(flushed, 'svc_buffer_flushes_total')).toBeGreaterThanOrEqual(1);
    expect(delta(flushed, 'svc_storage_writes_total')).toBe(2); // two UTC hours: one Parquet file each
    expect(delta(flushed, 'svc_storage_write_bytes_total')).toBeGreaterThan(0);
    expect(delta(flushed, 'svc_buffer_flush_failures_total')).toBe(0);
    expect(delta(flushed, 'svc_storage_errors_total')).toBe(0);
    for (const name of ALWAYS_ZERO) expect([name, sampleValue(flushed, name)]).toEqual([name, 0]);
  });

  test('Accept: application/json gives the same families as JSON', async () => {
    const res = await fetch(server.url + '/metrics', { headers: { accept: 'application/json' } });
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as Record<string, { type: string; samples: unknown[] }>;
    for (const name of COUNTERS) expect(body[name]?.type).toBe('counter');
    for (const name of GAUGES) expect(body[name]?.type).toBe('gauge');
    const latency = body.svc_http_latency_seconds as unknown as { type: string; samples: { labels: { group: string }; buckets: Record<string, number>; count: number }[] };
    expect(latency.type).toBe('histogram');
    const health = latency.samples.find((s) => s.labels.group === 'health')!;
    expect(health.buckets['+Inf']).toBe(health.count);
  });
});

describe('/api/v1/metrics*', () => {
  test('all metrics routes are public', async () => {
    for (const path of ['/metrics', '/api/v1/metrics', '/api/v1/metrics/memory', '/api/v1/metrics/query-pool', '/api/v1/metrics/endpoints', '/api/v1/metrics/timeseries/api'])
      expect([path, (await fetch(server.url + path)).status]).toEqual([path, 200]);
  });

  test('/api/v1/metrics is a flat snapshot of every metric', async () => {
    const { status, body } = await json(server, 'GET', '/api/v1/metrics', undefined, null);
    expect(status).toBe(200);
    expect(Date.parse(body.timestamp)).toBeGreaterThan(0);
    for (const name of [...COUNTERS, ...GAUGES]) expect([name, typeof body[name]]).toEqual([name, 'number']);
    for (const name of ALWAYS_ZERO) expect(body[name]).toBe(0);
    expect(body.svc_http_latency_seconds.count).toBeGreaterThan(0);
  });

  test('/api/v1/metrics/memory gives runtime and GC detail', async () => {
    const { body } = await json(server, 'GET', '/api/v1/metrics/memory', undefined, null);
    for (const k of ['alloc_bytes', 'heap_alloc_bytes', 'sys_bytes', 'heap_used_bytes', 'heap_total_bytes', 'external_bytes', 'rss_bytes', 'peak_rss_bytes'])
      expect([k, typeof body.memory[k]]).toEqual([k, 'number']);
    expect(body.memory.sys_bytes).toBeGreaterThan(0);
    expect(typeof body.gc.cycles).toBe('number');
    expect(body.runtime.pending_operations).toBeGreaterThanOrEqual(1);
    expect(body.runtime.bun_version).toBe(Bun.version);
    expect(body.runtime.num_cpu).toBeGreaterThan(0);
  });

  test('/api/v1/metrics/query-pool: query_errors is real, the pool figures stay 0', async () => {
    const families = await scrape();
    const { body } = await json(server, 'GET', '/api/v1/metrics/query-pool', undefined, null);
    expect(body.pool.query_errors).toBe(sampleValue(families, 'svc_query_errors_total'));
    expect(body.pool.query_requests).toBe(sampleValue(families, 'svc_query_requests_total'));
    for (const k of ['connections_open', 'connections_in_use', 'connections_idle', 'queries_total', 'query_errors_total']) expect([k, body.pool[k]]).toEqual([k, 0]);
  });

  test('/api/v1/metrics/endpoints groups counters by subsystem, HTTP by route group', async () => {
    const { body } = await json(server, 'GET', '/api/v1/metrics/endpoints', undefined, null);
    const families = await scrape();
    const health = body.http.groups.health;
    expect(health.requests_total).toBe(sampleValue(families, 'svc_http_requests_total', { group: 'health' }));
    expect(health.requests_success + health.requests_error).toBe(health.requests_total);
    expect(body.http.requests_total).toBeGreaterThanOrEqual(health.requests_total);
    for (const k of ['ingestion', 'msgpack', 'lineprotocol', 'query', 'buffer', 'storage', 'wal', 'compaction', 'audit']) expect(typeof body[k]).toBe('object');
    expect(body.buffer.records_buffered).toBe(sampleValue(families, 'svc_buffer_records_buffered'));
    // Grouped, never per route: no key is a path.
    expect(Object.keys(body.http.groups).some((g) => g.includes('/'))).toBe(false);
  });

  test('/api/v1/metrics/timeseries/:type serves each kind of history, sampled every interval', async () => {
    await Bun.sleep(2200); // interval 1 s: the ring holds the start sample and at least two more
    for (const type of ['system', 'application', 'api']) {
      const { status, body } = await json(server, 'GET', `/api/v1/metrics/timeseries/${type}`, undefined, null);
      expect(status).toBe(200);
      expect(body.type).toBe(type);
      expect(body.duration_minutes).toBe(30);
      expect(body.points_count).toBe(body.data.length);
      expect(body.data.length).toBeGreaterThanOrEqual(3);
      const times = body.data.map((p: { timestamp: string }) => Date.parse(p.timestamp));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    }
    const sys = (await json(server, 'GET', '/api/v1/metrics/timeseries/system?duration_minutes=1', undefined, null)).body;
    expect(sys.duration_minutes).toBe(1);
    expect(Object.keys(sys.data[0].values)).toEqual(expect.arrayContaining(['goroutines', 'memory_alloc_mb', 'memory_sys_mb', 'gc_cycles', 'cpu_percent']));
    const api = (await json(server, 'GET', '/api/v1/metrics/timeseries/api?duration_minutes=1440', undefined, null)).body;
    expect(api.data.at(-1).values.http_requests_total).toBeGreaterThan(0);
    expect(api.data.at(-1).values.db_connections_open).toBe(0);
    const app = (await json(server, 'GET', '/api/v1/metrics/timeseries/application', undefined, null)).body;
    expect(Object.keys(app.data[0].values)).toEqual(expect.arrayContaining(['ingest_records_total', 'buffer_records_buffered', 'query_errors_total']));
  });

  test('/api/v1/metrics/timeseries: an unknown type is 400 listing the valid ones', async () => {
    for (const type of ['bogus', 'SYSTEM', 'memory']) {
      const { status, body } = await json(server, 'GET', `/api/v1/metrics/timeseries/${type}`, undefined, null);
      expect(status).toBe(400);
      expect(body.error).toContain('system, application, api');
      expect(body.valid_types).toEqual(['system', 'application', 'api']);
    }
  });

  test('/api/v1/metrics/timeseries: duration_minutes outside 1-1440 or not a whole number is 400', async () => {
    for (const bad of ['0', '1441', '-5', 'abc', '1.5', '', '99999999999999999999']) {
      const { status, body } = await json(server, 'GET', `/api/v1/metrics/timeseries/api?duration_minutes=${encodeURIComponent(bad)}`, undefined, null);
      expect([bad, status]).toEqual([bad, 400]);
      expect(body.error).toStartWith('duration_minutes: ');
    }
    for (const good of ['1', '1440']) expect((await json(server, 'GET', `/api/v1/metrics/timeseries/api?duration_minutes=${good}`, undefined, null)).status).toBe(200);
  });
});

describe('the exposition checker', () => {
  test('rejects what a Prometheus parser rejects (so the tests above can fail)', () => {
    const bad = [
      '# TYPE a counter\na 1', // no final newline
      '# TYPE a counter\na one\n',
      '# TYPE 1a counter\n1a 1\n',
      'a 1\n# TYPE a counter\n',
      '# TYPE a counter\na 1\n# TYPE b gauge\nb 1\na 2\n',
      '# TYPE a counter\na{x="1} 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 2\nh_count 3\nh_sum 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_count 2\nh_sum 1\n',
    ];
    for (const text of bad) expect(() => parseExposition(text)).toThrow();
    expect(parseExposition('# HELP a x\n# TYPE a counter\na{k="v"} 1\n').get('a')?.samples).toEqual([{ name: 'a', labels: { k: 'v' }, value: 1 }]);
  });
});
