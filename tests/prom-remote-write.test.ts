/**
 * Prometheus remote write into svc: the route's contract with encoded requests, then the real
 * Prometheus (Debian's 2.42) scraping svc's own /metrics every second and remote-writing the
 * samples back into svc, read back with SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRequestV2, remoteWriteBody, remoteWriteBodyV2, V2_HEADERS } from './helpers/prom-write.ts';
import snappy from 'snappyjs';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';

const PROMETHEUS = '/usr/bin/prometheus';
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' } });
});
afterAll(async () => {
  await server?.cleanup();
});

const post = (body: Uint8Array, query = '?db=promtest', token: string | null = ADMIN_TOKEN) =>
  server.fetch(`/api/v1/prom/write${query}`, { method: 'POST', token, headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body });
const sql = async (q: string) => {
  const r = await json(server, 'POST', '/api/v1/query', { sql: q });
  expect(r.status).toBe(200);
  return (r.body as { data: unknown[][] }).data;
};

describe('POST /api/v1/prom/write', () => {
  test('samples become rows: metric -> measurement, labels -> tags, value at its time; stale markers dropped, NaN null', async () => {
    const body = remoteWriteBody([
      { labels: { __name__: 'http_requests', job: 'api', code: '200' }, samples: [[10, 1700000000000], [12, 1700000015000]] },
      { labels: { __name__: 'http_requests', job: 'api', code: '500' }, samples: [[NaN, 1700000000000], ['stale', 1700000015000]] },
    ]);
    expect((await post(body)).status).toBe(204);
    expect(await sql("SELECT code, job, value, time FROM promtest.http_requests ORDER BY code, time")).toEqual([
      ['200', 'api', 10, '2023-11-14T22:13:20Z'],
      ['200', 'api', 12, '2023-11-14T22:13:35Z'],
      ['500', 'api', null, '2023-11-14T22:13:20Z'],
    ]);
  });

  test('x-svc-database selects the database when db is absent', async () => {
    const body = remoteWriteBody([{ labels: { __name__: 'by_header' }, samples: [[1, 1700000000000]] }]);
    const res = await server.fetch('/api/v1/prom/write', { method: 'POST', headers: { 'x-svc-database': 'hdr' }, body });
    expect(res.status).toBe(204);
    expect(await sql('SELECT value FROM hdr.by_header')).toEqual([[1]]);
  });

  test('refusals: no token 401, garbage 400, bad database name 400; nothing is written', async () => {
    const body = remoteWriteBody([{ labels: { __name__: 'refused' }, samples: [[1, 1700000000000]] }]);
    expect((await post(body, '?db=promtest', null)).status).toBe(401);
    const garbage = await post(new TextEncoder().encode('this is not snappy'));
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: string }).error).toContain('remote-write');
    expect((await post(body, '?db=../etc')).status).toBe(400);
    expect(await sql("SELECT count(*)::INTEGER FROM promtest.refused")).toEqual([[0]]);
  });
});

describe('what Prometheus configures and expects', () => {
  test('every credential form Prometheus can send: authorization (Bearer), basic_auth (token as password), an x-api-key header', async () => {
    const body = remoteWriteBody([{ labels: { __name__: 'auth_forms' }, samples: [[1, 1700000000000]] }]);
    const basic = `Basic ${Buffer.from(`prometheus:${ADMIN_TOKEN}`).toString('base64')}`;
    for (const headers of <Record<string, string>[]>[{ authorization: `Bearer ${ADMIN_TOKEN}` }, { authorization: basic }, { 'x-api-key': ADMIN_TOKEN }]) {
      const res = await server.fetch('/api/v1/prom/write?db=promauth', { method: 'POST', token: null, headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', ...headers }, body });
      expect(res.status).toBe(204);
    }
    const wrong = `Basic ${Buffer.from('prometheus:svc_wrong').toString('base64')}`;
    expect((await server.fetch('/api/v1/prom/write?db=promauth', { method: 'POST', token: null, headers: { authorization: wrong }, body })).status).toBe(401);
    expect(await sql('SELECT count(*)::INTEGER FROM promauth.auth_forms')).toEqual([[3]]);
  });

  test('backpressure: 503 with Retry-After (which Prometheus retries), nothing written; a body that fits goes through', async () => {
    const small = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', SVC_SERVER_MAX_INFLIGHT_BODY_SIZE: '1KB' } });
    try {
      const series = Array.from({ length: 300 }, (_, i) => ({ labels: { __name__: 'pressed', host: `h${i}` }, samples: [[i, 1700000000000]] as [number, number][] }));
      const body = remoteWriteBody(series);
      expect(body.length).toBeGreaterThan(1024);
      const refused = await small.fetch('/api/v1/prom/write?db=p', { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { error: string }).error).toContain('server.max_inflight_body_size');
      const fits = remoteWriteBody(series.slice(0, 2));
      expect((await small.fetch('/api/v1/prom/write?db=p', { method: 'POST', body: fits })).status).toBe(204);
      const r = await json(small, 'POST', '/api/v1/query', { sql: 'SELECT count(*)::INTEGER FROM p.pressed' });
      expect((r.body as { data: unknown[][] }).data).toEqual([[2]]);
    } finally {
      await small.cleanup();
    }
  });
});

describe('remote-write 2.0 on the same route', () => {
  const postV2 = (body: Uint8Array, headers: Record<string, string> = {}) =>
    server.fetch('/api/v1/prom/write?db=promv2', { method: 'POST', headers: { ...V2_HEADERS, ...headers }, body });
  const written = (res: Response) =>
    ['Samples', 'Histograms', 'Exemplars'].map((k) => res.headers.get(`x-prometheus-remote-write-${k.toLowerCase()}-written`));

  test('samples become rows as with 1.0; the Written headers count samples (stale markers included), histograms and exemplars (never stored)', async () => {
    const res = await postV2(
      remoteWriteBodyV2([
        { labels: { __name__: 'http_requests', job: 'api', code: '200' }, samples: [[10, 1700000000000], [12, 1700000015000]], metadata: { type: 1, help: 'Requests.', unit: '' }, createdMs: 1699999000000 },
        { labels: { __name__: 'http_requests', job: 'api', code: '500' }, samples: [[NaN, 1700000000000], ['stale', 1700000015000]], exemplars: [{ labels: { trace_id: 't1' }, value: 1, ms: 1700000000000 }] },
        { labels: { __name__: 'latency', job: 'api' }, samples: [], histograms: [{ count: 4, sum: 1.5, ms: 1700000000000 }] },
      ]),
    );
    expect(res.status).toBe(204);
    expect(written(res)).toEqual(['4', '1', '0']);
    expect(await sql('SELECT code, job, value, time FROM promv2.http_requests ORDER BY code, time')).toEqual([
      ['200', 'api', 10, '2023-11-14T22:13:20Z'],
      ['200', 'api', 12, '2023-11-14T22:13:35Z'],
      ['500', 'api', null, '2023-11-14T22:13:20Z'],
    ]);
    expect(await sql('SELECT c.value, s.value, c.job FROM promv2.latency_count c JOIN promv2.latency_sum s USING (time)')).toEqual([[4, 1.5, 'api']]);
  });

  test('415 for a message, encoding or version it does not read; 400 naming a bad symbol reference; 400 for a truncated body; nothing written', async () => {
    const series = [{ labels: { __name__: 'v2_refused', host: 'h' }, samples: [[1, 1700000000000]] as [number, number][] }];
    const body = remoteWriteBodyV2(series);
    for (const headers of <Record<string, string>[]>[
      { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v3.Request' },
      { 'content-type': 'application/json' },
      { 'content-encoding': 'zstd' },
      { 'x-prometheus-remote-write-version': '3.0.0' },
    ]) {
      const res = await postV2(body, headers);
      expect(res.status).toBe(415);
      expect(((await res.json()) as { error: string }).error).toMatch(/cannot accept/);
    }
    const raw = encodeRequestV2(series);
    const badRef = Uint8Array.from(raw);
    badRef[badRef.lastIndexOf(4, badRef.length - 12)] = 77; // the value ref of host=h
    const bad = await postV2(snappy.compress(badRef));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('timeseries 0 has a label value symbol reference 77, but the request has 5 symbols');
    expect(written(bad)).toEqual([null, null, null]);
    const truncated = await postV2(snappy.compress(raw.subarray(0, raw.length - 3)));
    expect(truncated.status).toBe(400);
    expect(((await truncated.json()) as { error: string }).error).toContain('remote-write');
    expect(await sql('SELECT count(*)::INTEGER FROM promv2.v2_refused')).toEqual([[0]]);
  });

  test('1.0 bodies still go through with proto=prometheus.WriteRequest or no proto, and get no Written headers', async () => {
    const body = remoteWriteBody([{ labels: { __name__: 'v1_again' }, samples: [[3, 1700000000000]] }]);
    for (const type of ['application/x-protobuf;proto=prometheus.WriteRequest', 'application/x-protobuf']) {
      const res = await server.fetch('/api/v1/prom/write?db=promv2', { method: 'POST', headers: { 'content-type': type, 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' }, body });
      expect(res.status).toBe(204);
      expect(written(res)).toEqual([null, null, null]);
    }
    expect(await sql('SELECT count(*)::INTEGER FROM promv2.v1_again')).toEqual([[2]]);
  });
});

describe('the real Prometheus', () => {
  test('prometheus is installed (the test fails, not skips, without it)', () => {
    expect(Bun.file(PROMETHEUS).size).toBeGreaterThan(0);
  });

  test("scrapes svc's /metrics and remote-writes the samples into svc; SQL reads them back", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-prom-'));
    const target = new URL(server.url).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: svc',
        '    static_configs:',
        `      - targets: ['${target}']`,
        'remote_write:',
        `  - url: ${server.url}/api/v1/prom/write?db=prom`,
        '    authorization:',
        `      credentials: ${ADMIN_TOKEN}`,
        '    queue_config:',
        '      batch_send_deadline: 1s',
        '      min_backoff: 100ms',
        '      max_backoff: 1s',
      ].join('\n'),
    );
    const proc = Bun.spawn([PROMETHEUS, `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, '--web.listen-address=127.0.0.1:0'], {
      stdout: 'ignore',
      stderr: 'pipe',
    });
    let log = '';
    void (async () => {
      for await (const chunk of proc.stderr) log += new TextDecoder().decode(chunk);
    })();
    try {
      // Bounded wait for the first remote-written scrape of `up` and of one of svc's own metrics.
      const deadline = Date.now() + 45_000;
      let up: unknown[][] = [];
      while (Date.now() < deadline) {
        const r = await json(server, 'POST', '/api/v1/query', { sql: "SELECT job, instance, value FROM prom.up WHERE job = 'svc' LIMIT 1" });
        up = r.status === 200 ? (r.body as { data: unknown[][] }).data : [];
        if (up.length > 0) break;
        expect(proc.exitCode).toBeNull();
        await Bun.sleep(250);
      }
      expect(up, `prometheus log:\n${log}`).toEqual([['svc', target, 1]]);
      let own: unknown[][] = [];
      while (Date.now() < deadline && own.length === 0) {
        own = await sql("SELECT count(*)::INTEGER FROM prom.svc_http_requests_total WHERE job = 'svc' HAVING count(*) > 0");
        if (own.length === 0) await Bun.sleep(250);
      }
      expect(own.length).toBe(1);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
