import { Hono } from 'hono';
import { MemoryClient } from '../client/memory-client.ts';
import { handleMcpRequest } from '../mcp/mcp-server.ts';
import type { MemoryEnv } from './env.ts';

/**
 * `/mcp`: the MCP Streamable HTTP endpoint (behind the same key check as /api). Tools call this
 * service's own routes in process, with the caller's key, so they see exactly what the key may.
 */
export function mcpRoutes(appFetch: () => (req: Request) => Response | Promise<Response>) {
  const app = new Hono<MemoryEnv>();
  app.post('/', (c) => {
    const client = new MemoryClient({ baseUrl: 'http://memory', apiKey: c.get('apiKey'), fetch: (req) => appFetch()(req) });
    return handleMcpRequest(c.req.raw, client);
  });
  // Stateless: no server-sent stream to open and no session to end (the transport's spec allows 405).
  app.on(['GET', 'DELETE'], '/', (c) =>
    c.json({ error: 'method_not_allowed', message: 'this MCP endpoint is stateless: send JSON-RPC requests with POST' }, 405, { allow: 'POST' }),
  );
  return app;
}
