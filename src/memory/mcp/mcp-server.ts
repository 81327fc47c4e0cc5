/**
 * The MCP server of the memory service over its two transports: Streamable HTTP at `/mcp` (stateless:
 * one server per request, JSON responses) and stdio (`svc mcp`). Tools are in memory-tools.ts.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { messageOf } from '../../lib/errors.ts';
import { MemoryApiError, type MemoryClient } from '../client/memory-client.ts';
import { describeIssue } from '../http/validate.ts';
import { MEMORY_TOOLS } from './memory-tools.ts';

const SERVER_INFO = { name: 'svc-memory', version: '2.0.0' };

/** Tool list entries: JSON schemas of the tools' input, generated once. */
const TOOL_LIST = MEMORY_TOOLS.map((t) => {
  const { $schema: _s, ...inputSchema } = z.toJSONSchema(t.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { name: t.name, description: t.description, inputSchema: { ...inputSchema, type: 'object' as const } };
});

/** An MCP server whose tools call the memory API through `client`. */
export function memoryMcpServer(client: MemoryClient): McpServer {
  const mcp = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = MEMORY_TOOLS.find((t) => t.name === req.params.name);
    if (!tool) return failed(`unknown tool '${req.params.name}' (tools: ${MEMORY_TOOLS.map((t) => t.name).join(', ')})`);
    const args = req.params.arguments ?? {};
    const checked = tool.schema.safeParse(args);
    if (!checked.success) return failed(`invalid_request: ${describeIssue(checked.error.issues[0]!)}`);
    try {
      const { text, data } = await tool.run(client, args);
      return { content: [{ type: 'text', text }], structuredContent: data };
    } catch (err) {
      if (err instanceof MemoryApiError) return failed(`${err.code}: ${err.message}`);
      return failed(`internal: ${messageOf(err)}`);
    }
  });
  return mcp;
}

function failed(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Answers one Streamable HTTP request at `/mcp` with a fresh stateless server. */
export async function handleMcpRequest(req: Request, client: MemoryClient): Promise<Response> {
  const server = memoryMcpServer(client);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(req);
}

/** Serves MCP over stdin/stdout until stdin closes (the protocol owns stdout: log to stderr only). */
export async function serveMcpStdio(client: MemoryClient): Promise<void> {
  const server = memoryMcpServer(client);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  await closed;
}
