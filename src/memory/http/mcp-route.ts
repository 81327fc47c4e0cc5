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
  app.all('/', (c) => {
    const client = new MemoryClient({ baseUrl: 'http://memory', apiKey: c.get('apiKey'), fetch: (req) => appFetch()(req) });
    return handleMcpRequest(c.req.raw, client);
  });
  return app;
}
