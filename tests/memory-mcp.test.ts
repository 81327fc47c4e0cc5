/**
 * The memory service's MCP server, through the official SDK client over both transports: Streamable
 * HTTP at /mcp on the memory port (memory keys required) and stdio (`svc mcp --memory-url URL`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MEMORY_ADMIN_KEY, uid } from './memory-support.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const TOOLS = ['memory_store', 'memory_search', 'memory_context', 'memory_list', 'memory_update', 'memory_history', 'memory_forget', 'agent_stats', 'session_start'];
let server: TestServer;

beforeAll(async () => void (server = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } })));
afterAll(async () => await server.cleanup());

async function httpClient(key: string | null): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const headers: Record<string, string> = key === null ? {} : { 'x-api-key': key };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.memoryUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;

/** The tool round trip both transports must pass. */
async function exercise(c: Client) {
  const tools = (await c.listTools()).tools;
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
  const store = tools.find((t) => t.name === 'memory_store')!;
  expect(store.inputSchema.required).toEqual(expect.arrayContaining(['agent_id', 'content']));
  expect(Object.keys(store.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['memory_type', 'tags', 'importance', 'expires_at']));

  const agent = uid('mcp');
  const session = await call(c, 'session_start', { agent_id: agent });
  const sid = String(session.structuredContent!.session_id);
  const stored = await call(c, 'memory_store', { agent_id: agent, session_id: sid, content: 'the staging database moved to eu-west', memory_type: 'decision', importance: 0.8 });
  expect(stored.isError).toBeFalsy();
  const id = String(stored.structuredContent!.memory_id);
  expect(stored.content[0]!.text).toContain(id);

  const found = await call(c, 'memory_search', { agent_id: agent, query: 'databases moving' });
  expect((found.structuredContent!.results as { memory_id: string }[]).map((m) => m.memory_id)).toEqual([id]);
  expect(found.content[0]!.text).toContain('the staging database moved to eu-west');

  const updated = await call(c, 'memory_update', { memory_id: id, content: 'the staging database moved to us-east' });
  expect(updated.structuredContent).toMatchObject({ memory_id: id, version: 2 });
  expect((await call(c, 'memory_history', { memory_id: id })).structuredContent).toMatchObject({ count: 2 });
  expect((await call(c, 'memory_list', { agent_id: agent, tags: [] })).structuredContent).toMatchObject({ count: 1 });
  const ctx = await call(c, 'memory_context', { session_id: sid });
  expect(ctx.content[0]!.text).toContain('## Decisions (1)\n- the staging database moved to us-east');
  expect((await call(c, 'agent_stats', { agent_id: agent })).structuredContent).toMatchObject({ memory_count: 1, session_count: 1 });

  const bad = await call(c, 'memory_store', { agent_id: agent, content: 'x', importance: 7 });
  expect(bad.isError).toBe(true);
  expect(bad.content[0]!.text).toContain('importance');
  const missing = await call(c, 'memory_history', { memory_id: 'mem_unknown' });
  expect(missing.isError).toBe(true);
  expect(missing.content[0]!.text).toContain('not_found');

  expect((await call(c, 'memory_forget', { memory_id: id })).isError).toBeFalsy();
  expect((await call(c, 'memory_search', { agent_id: agent, query: 'database' })).structuredContent).toMatchObject({ count: 0 });

  // Forgetting by filter: the matching memories only.
  for (const content of ['tagged one', 'tagged two', 'kept'])
    await call(c, 'memory_store', { agent_id: agent, content, tags: content === 'kept' ? [] : ['tmp'] });
  const bulk = await call(c, 'memory_forget', { agent_id: agent, tags: ['tmp'] });
  expect(bulk.structuredContent).toMatchObject({ forgotten: 2, purged: false });
  expect(bulk.content[0]!.text).toContain('2 memories forgotten');
  expect((await call(c, 'memory_list', { agent_id: agent })).structuredContent).toMatchObject({ count: 1 });
  expect((await call(c, 'memory_forget', {})).isError).toBe(true);
}

describe('MCP', () => {
  test('Streamable HTTP at /mcp: every tool through the SDK client', async () => {
    const c = await httpClient(MEMORY_ADMIN_KEY);
    try {
      await exercise(c);
    } finally {
      await c.close();
    }
  });

  test('/mcp refuses a missing or invalid key with 401', async () => {
    await expect(httpClient(null)).rejects.toThrow();
    const res = await fetch(`${server.memoryUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer svcm_wrong' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'unauthorized' });
  });

  test('stdio: `svc mcp --memory-url URL` with SVC_MEMORY_KEY, spawned by the SDK client', async () => {
    const c = new Client({ name: 'svc-test', version: '1.0.0' });
    await c.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(import.meta.dir, '..', 'src', 'main.ts'), 'mcp', '--memory-url', server.memoryUrl],
        env: { ...(process.env as Record<string, string>), SVC_MEMORY_KEY: MEMORY_ADMIN_KEY },
        stderr: 'pipe',
      }),
    );
    try {
      await exercise(c);
    } finally {
      await c.close();
    }
  }, 30_000);
});
