/**
 * `svc mcp --memory-url URL`: an MCP server on stdin/stdout for desktop agents to spawn, whose tools
 * call a running memory service (key from env SVC_MEMORY_KEY). Exit codes: 0 when stdin closes,
 * 2 usage.
 */
import { MemoryClient, serveMcpStdio } from '../memory/index.ts';
import type { ParsedArgs } from './args.ts';

const USAGE = 'usage: SVC_MEMORY_KEY=svcm_... svc mcp [--memory-url http://127.0.0.1:9100]';

/** Runs the stdio MCP server until its input closes. */
export async function runMcpCommand(args: ParsedArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const url = typeof args.flags['memory-url'] === 'string' ? args.flags['memory-url'] : 'http://127.0.0.1:9100';
  const key = env.SVC_MEMORY_KEY ?? '';
  if (!key) {
    process.stderr.write(`svc mcp: set SVC_MEMORY_KEY to a memory service API key\n${USAGE}\n`);
    return 2;
  }
  if (!/^https?:\/\//.test(url)) {
    process.stderr.write(`svc mcp: --memory-url must be an http(s) URL, got '${url}'\n${USAGE}\n`);
    return 2;
  }
  await serveMcpStdio(new MemoryClient({ baseUrl: url, apiKey: key }));
  return 0;
}
