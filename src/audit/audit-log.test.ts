/** The audit queue over the real SQLite store: the spec's 1000-event bound, drops and failed batches counted exactly. */
import { expect, test } from 'bun:test';
import { migrations, openCatalog } from '../catalog/index.ts';
import { Logger, createSvcMetrics } from '../observability/index.ts';
import { AUDIT_QUEUE_SIZE, AuditLog } from './audit-log.ts';
import type { AuditRequest } from './audit-event.ts';
import { SqliteAuditStore } from './audit-store.ts';

const request = (i: number): AuditRequest => ({
  service: 'timeseries', timeMs: Date.UTC(2026, 0, 1) + i, tokenId: 't', tokenName: 'n', clientIp: '127.0.0.1',
  method: 'POST', path: `/api/v1/databases/db${i}?p=svc_secret_token_value_123456789`, status: 201, durationMs: 1, database: null,
});

function setup() {
  const catalog = openCatalog(':memory:', migrations);
  const metrics = createSvcMetrics();
  const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10 });
  const log = new AuditLog(new SqliteAuditStore(catalog), { retentionDays: 90, includeReads: false }, metrics, logger);
  return { catalog, metrics, log };
}

test('a burst faster than the writer fills the queue: every event past 1000 is dropped and counted', () => {
  const { metrics, log } = setup();
  for (let i = 0; i < 5000; i++) log.record(request(i));
  log.flush();
  expect(metrics.auditDropped.value()).toBe(5000 - AUDIT_QUEUE_SIZE);
  expect(metrics.auditEvents.value()).toBe(AUDIT_QUEUE_SIZE);
  const stats = log.stats();
  expect(stats).toMatchObject({ total: AUDIT_QUEUE_SIZE, dropped: 4000, write_errors: 0 });
  // The first thousand were kept, without their query strings.
  const events = log.list({ limit: 1000 });
  expect(events.at(-1)!.path).toBe('/api/v1/databases/db0');
  expect(JSON.stringify(events)).not.toContain('svc_secret');
  log.stop();
});

test('a failed batch loses its events and counts one write error', () => {
  const { catalog, metrics, log } = setup();
  for (let i = 0; i < 10; i++) log.record(request(i));
  catalog.exec('DROP TABLE audit_events');
  log.flush();
  expect(metrics.auditWriteErrors.value()).toBe(1);
  expect(metrics.auditEvents.value()).toBe(0);
});

test('a secret-looking path segment is replaced', () => {
  const { log } = setup();
  log.record({ ...request(0), method: 'DELETE', path: '/api/v1/keys/svcm_abcdefghijklmnopqrstuvwxyz012345' });
  log.flush();
  expect(log.list({ limit: 1 })[0]).toMatchObject({ path: '/api/v1/keys/[redacted]', detail: { service: 'timeseries' } });
});
