import { describe, expect, test } from 'bun:test';
import { Hono } from 'hono';
import { AppError } from '../../lib/errors.ts';
import { Readiness } from '../../lib/readiness.ts';
import { writeGate } from './write-gate.ts';

function app(readiness: Readiness) {
  const a = new Hono();
  a.use('*', writeGate(readiness as never) as never);
  a.onError((err) => new Response(err.message, { status: err instanceof AppError ? err.status : 500 }));
  a.all('*', (c) => c.text('ok'));
  return a;
}

// While the WAL is replayed, anything that changes stored rows would run before older rows are back
// in the buffers: a delete, retention run or drop would miss them and they would come back.
describe('write gate during WAL replay', () => {
  const mutating: [string, string][] = [
    ['POST', '/api/v1/write/line-protocol'],
    ['POST', '/write'],
    ['POST', '/api/v1/import/csv'],
    ['POST', '/api/v1/delete'],
    ['POST', '/api/v1/retention/p1/execute'],
    ['DELETE', '/api/v1/databases/db1'],
    ['POST', '/api/v1/compaction/trigger'],
    ['POST', '/api/v1/backup/restore'],
    ['POST', '/api/v1/continuous_queries/1/execute'],
    ['POST', '/api/v1/continuous-queries/1/execute'],
    ['POST', '/api/v1/mqtt/subscriptions/1/start'],
  ];
  for (const [method, path] of mutating)
    test(`${method} ${path} is refused while starting and accepted once ready`, async () => {
      const r = new Readiness();
      expect((await app(r).request(path, { method })).status).toBe(503);
      r.phase = 'ready';
      expect((await app(r).request(path, { method })).status).toBe(200);
    });

  test('reads and queries pass while starting', async () => {
    const r = new Readiness();
    for (const [method, path] of [
      ['GET', '/api/v1/databases'],
      ['POST', '/api/v1/query'],
      ['GET', '/api/v1/compaction/status'],
      ['GET', '/health'],
    ] as const)
      expect((await app(r).request(path, { method })).status).toBe(200);
  });
});
