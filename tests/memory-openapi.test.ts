/**
 * GET /openapi.json on the memory port: an OpenAPI 3.1 document generated from the routes' zod
 * schemas. Every documented operation is routed on the real server (none answers the router's own
 * "no route" 404), and the document builder refuses a route list it does not match.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { OPERATIONS, openApiDocument } from '../src/memory/http/openapi.ts';
import { MEMORY_ADMIN_KEY } from './memory-support.ts';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
beforeAll(async () => void (server = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } })));
afterAll(async () => await server.cleanup());

type Doc = { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: { 'application/json': { schema: Record<string, unknown> } } }; parameters?: { name: string; in: string }[]; security?: unknown[] }>> };

test('the document is OpenAPI 3.1, public, with request schemas from the zod schemas', async () => {
  const res = await fetch(`${server.memoryUrl}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as Doc;
  expect(doc.openapi).toBe('3.1.0');
  const create = doc.paths['/api/v1/memories']!.post!.requestBody!.content['application/json'].schema as { anyOf: { required?: string[]; properties: Record<string, unknown> }[] };
  expect(create.anyOf[0]!.required).toEqual(['agent_id', 'content']);
  expect(create.anyOf[0]!.properties.importance).toEqual({ anyOf: [{ type: 'number', minimum: 0, maximum: 1 }, { type: 'null' }] });
  expect(create.anyOf[0]!.properties.memory_type).toMatchObject({ anyOf: expect.arrayContaining([{ type: 'string', enum: ['episodic', 'session', 'decision', 'entity'] }]) });
  expect(doc.paths['/api/v1/memories']!.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['agent_id', 'tags', 'metadata', 'parent_id', 'limit']));
  expect(doc.paths['/api/v1/memories/{id}']!.patch!.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } } as never]);
  expect(doc.paths['/health']!.get!.security).toEqual([]);
});

test('every documented operation is routed on the real server', async () => {
  const doc = (await (await fetch(`${server.memoryUrl}/openapi.json`)).json()) as Doc;
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths))
    for (const method of Object.keys(ops)) {
      const url = server.memoryUrl + path.replace(/\{\w+\}/g, 'unknown-id');
      const hasBody = method !== 'get' && method !== 'delete';
      const res = await fetch(url, {
        signal: AbortSignal.timeout(5000),
        method: method.toUpperCase(),
        headers: { 'x-api-key': MEMORY_ADMIN_KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: hasBody ? '{}' : undefined,
      });
      const text = await res.text();
      expect(`${method} ${path}: ${text.includes('no route for') ? 'not routed' : 'routed'}`).toBe(`${method} ${path}: routed`);
      checked++;
    }
  expect(checked).toBe(Object.keys(OPERATIONS).length);
});

test('the builder refuses routes it does not document, and documentation of missing routes', () => {
  const routes = Object.keys(OPERATIONS).map((k) => ({ method: k.split(' ')[0]!, path: k.split(' ')[1]! }));
  expect(() => openApiDocument(routes)).not.toThrow();
  expect(() => openApiDocument([...routes, { method: 'GET', path: '/api/v1/secret' }])).toThrow('undocumented GET /api/v1/secret');
  expect(() => openApiDocument(routes.filter((r) => r.path !== '/api/v1/search'))).toThrow('not routed POST /api/v1/search');
});
