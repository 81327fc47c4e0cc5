/**
 * GET /openapi.json on the time-series port: an OpenAPI 3.1 document generated from the routes' zod
 * schemas. Every operation the app registered is documented (the builder refuses anything else),
 * every documented operation is routed on the real server (none answers the router's own "no
 * route" 404), and operations of features switched off are left out rather than documented.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATIONS, openApiDocument } from '../src/http/openapi.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
// Every optional feature on, so every operation of the catalog is routed.
const coldDir = mkdtempSync(join(tmpdir(), 'svc-openapi-cold-'));
beforeAll(async () => void (server = await startServer({ env: { SVC_AUDIT_LOG_ENABLED: 'true', SVC_TIERING_ENABLED: 'true', SVC_TIERING_COLD_BACKEND: 'local', SVC_TIERING_COLD_LOCAL_PATH: coldDir } })));
afterAll(async () => {
  await server.cleanup();
  rmSync(coldDir, { recursive: true, force: true });
});

type Op = { summary: string; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; parameters?: { name: string; in: string }[]; security?: unknown[] };
type Doc = { openapi: string; security: unknown[]; paths: Record<string, Record<string, Op>> };

test('the document is OpenAPI 3.1, public, with request schemas from the zod schemas', async () => {
  const res = await server.fetch('/openapi.json', { token: null });
  expect(res.status).toBe(200);
  const doc = (await res.json()) as Doc;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  const query = doc.paths['/api/v1/query']!.post!.requestBody!.content['application/json']!.schema as { properties: Record<string, unknown> };
  expect(query.properties.format).toEqual({ type: 'string', enum: ['json'] });
  const token = doc.paths['/api/v1/auth/tokens']!.post!.requestBody!.content['application/json']!.schema as { required: string[]; additionalProperties: boolean };
  expect(token.required).toContain('name');
  expect(token.additionalProperties).toBe(false);
  expect(doc.paths['/api/v1/query/{measurement}']!.get!.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(['path:measurement', 'query:limit', 'query:start', 'query:end']));
  expect(Object.keys(doc.paths['/write']!.post!.requestBody!.content)).toEqual(['text/plain']);
  expect(doc.paths['/health']!.get!.security).toEqual([]);
  expect(doc.paths['/api/v1/query']!.post!.security).toBeUndefined();
});

test('every documented operation is routed on the real server, and every catalog entry is documented', async () => {
  const doc = (await (await server.fetch('/openapi.json')).json()) as Doc;
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths))
    for (const method of Object.keys(ops)) {
      const url = path.replace(/\{\w+\}/g, 'unknown-id');
      const hasBody = method !== 'get' && method !== 'delete';
      const res = await server.fetch(url, {
        signal: AbortSignal.timeout(10_000),
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json', accept: 'text/html, application/json' },
        body: hasBody ? '{}' : undefined,
      });
      const text = await res.text();
      const unrouted = res.status === 404 && text === JSON.stringify({ error: `no route for ${method.toUpperCase()} ${url}` });
      expect(`${method} ${path}: ${unrouted ? 'not routed' : 'routed'}`).toBe(`${method} ${path}: routed`);
      checked++;
    }
  // The audit log and tiering are on and query management, governance and the console are on by default: nothing optional is missing.
  expect(checked).toBe(Object.keys(OPERATIONS).length);
});

test('the document needs no token, even with auth on', async () => {
  expect((await server.fetch('/openapi.json', { token: null })).status).toBe(200);
  expect((await server.fetch('/api/v1/measurements', { token: null })).status).toBe(401);
});

test('the builder refuses undocumented routes and missing ones, and leaves out switched-off features', () => {
  const routes = Object.keys(OPERATIONS).map((k) => ({ method: k.split(' ')[0]!, path: k.split(' ')[1]! }));
  expect(() => openApiDocument(routes)).not.toThrow();
  expect(() => openApiDocument([...routes, { method: 'GET', path: '/api/v1/secret' }])).toThrow('undocumented GET /api/v1/secret');
  expect(() => openApiDocument(routes.filter((r) => r.path !== '/api/v1/query'))).toThrow('not routed POST /api/v1/query');
  // Middleware and wildcard mounts (a disabled feature's catch-all) are not operations.
  const auditOff = [...routes.filter((r) => !r.path.startsWith('/api/v1/audit')), { method: 'ALL', path: '/api/v1/audit/*' }];
  const doc = openApiDocument(auditOff) as Doc;
  expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/audit'))).toEqual([]);
  expect(doc.paths['/api/v1/query']).toBeDefined();
});
