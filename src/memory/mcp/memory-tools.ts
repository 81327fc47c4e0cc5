/**
 * The memory service's Model Context Protocol tools. Each tool's JSON schema is generated from the
 * zod schema the matching HTTP route checks, arguments are checked with it, and the call goes through
 * the typed HTTP client (in process for `/mcp`, over the network for `svc mcp`), so both transports
 * behave exactly like the HTTP API. Results are text an LLM can read plus the API's JSON as
 * structured content.
 */
import { z } from 'zod';
import type { MemoryClient } from '../client/memory-client.ts';
import { contextSchema, forgetSchema, idField, labelField, limitField, memoryInputSchema, memoryPatchSchema, memoryTypeField, metadataFilterField, offsetField, opt, orderField, searchSchema, tagField, timeField } from '../http/schemas.ts';
import type { Memory } from '../memory-record.ts';

/** One tool: its name, what it is for, its argument schema and what it does. */
export interface MemoryTool {
  name: string;
  description: string;
  schema: z.ZodType;
  run(client: MemoryClient, args: Record<string, unknown>): Promise<{ text: string; data: Record<string, unknown> }>;
}

const memoryIdArg = z.object({ memory_id: idField });
const listArgs = z.object({
  agent_id: opt(idField),
  session_id: opt(idField),
  memory_type: opt(memoryTypeField),
  event_type: opt(labelField),
  tags: opt(z.array(tagField)),
  since: opt(timeField),
  until: opt(timeField),
  parent_id: opt(idField),
  metadata: opt(metadataFilterField),
  limit: opt(limitField),
  offset: opt(offsetField),
  order: opt(orderField),
});

/** One line per memory: `- [type, time] content (id)`. */
function lines(memories: readonly (Memory & { score?: number })[]): string {
  if (memories.length === 0) return 'No memories found.';
  return memories
    .map((m) => `- [${m.memory_type}, ${m.time.slice(0, 19)}Z${m.score === undefined ? '' : `, score ${m.score.toFixed(3)}`}] ${m.content.replace(/\s+/g, ' ')} (${m.memory_id})`)
    .join('\n');
}

const data = (x: unknown) => x as Record<string, unknown>;
/** The arguments without the ids that travel in the path. */
const dropId = (args: Record<string, unknown>) => Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'memory_id' && k !== 'session_id'));

/** Every tool the MCP server offers. */
export const MEMORY_TOOLS: MemoryTool[] = [
  {
    name: 'memory_store',
    description: 'Store a memory for an agent: what happened (episodic), why (decision), what exists (entity) or session context. Returns the stored memory with its memory_id.',
    schema: memoryInputSchema,
    async run(client, args) {
      const m = await client.createMemory(args as never);
      return { text: `Stored memory ${m.memory_id} (${m.memory_type}) for agent ${m.agent_id}.`, data: data(m) };
    },
  },
  {
    name: 'memory_search',
    description: 'Search memories. `query` finds text matches among all memories passing the filters, ranked by relevance, recency and importance; without it, filters only, newest first.',
    schema: searchSchema,
    async run(client, args) {
      const r = await client.search(args as never);
      return { text: `${r.count} result(s):\n${lines(r.results)}`, data: data(r) };
    },
  },
  {
    name: 'memory_context',
    description: 'The Markdown context of a session (recent actions, decisions, entities), optionally within max_tokens; important and recent memories are kept first.',
    schema: z.object({ session_id: idField, ...contextSchema.shape }),
    async run(client, args) {
      const ctx = await client.context(String(args.session_id), dropId(args) as never);
      return { text: ctx.context, data: data(ctx) };
    },
  },
  {
    name: 'memory_list',
    description: 'List memories by filters (agent, session, type, tags, time, metadata, parent), newest first by default.',
    schema: listArgs,
    async run(client, args) {
      const { tags, ...rest } = args as { tags?: string[] } & Record<string, unknown>;
      const r = await client.listMemories({ ...rest, ...(tags?.length ? { tags: tags.join(',') } : {}) } as never);
      return { text: `${r.count} memor${r.count === 1 ? 'y' : 'ies'}${r.has_more ? ' (more available)' : ''}:\n${lines(r.memories)}`, data: data(r) };
    },
  },
  {
    name: 'memory_update',
    description: 'Change a memory (content, importance, tags, metadata, memory_type, event_type, expires_at); the previous version stays in its history.',
    schema: z.object({ memory_id: idField, ...memoryPatchSchema.shape }),
    async run(client, args) {
      const m = await client.patchMemory(String(args.memory_id), dropId(args) as never);
      return { text: `Memory ${m.memory_id} is now at version ${m.version}.`, data: data(m) };
    },
  },
  {
    name: 'memory_history',
    description: 'Every version of a memory, oldest first.',
    schema: memoryIdArg,
    async run(client, args) {
      const h = await client.history(String(args.memory_id));
      return { text: h.versions.map((v) => `v${v.version} (${v.updated_at}): ${v.content}`).join('\n'), data: data(h) };
    },
  },
  {
    name: 'memory_forget',
    description: 'Forget one memory (`memory_id`), or every memory matching agent_id / session_id / tags / before. With purge: true the content is erased from storage.',
    schema: z.object({ memory_id: opt(idField), ...forgetSchema.shape }),
    async run(client, args) {
      const purge = args.purge === true;
      if (typeof args.memory_id === 'string') {
        await client.deleteMemory(args.memory_id, { purge });
        return { text: `Memory ${args.memory_id} ${purge ? 'purged' : 'forgotten'}.`, data: { forgotten: 1, purged: purge } };
      }
      const r = await client.forget(dropId(args) as never);
      return { text: `${r.forgotten} memor${r.forgotten === 1 ? 'y' : 'ies'} ${purge ? 'purged' : 'forgotten'}.`, data: data(r) };
    },
  },
  {
    name: 'agent_stats',
    description: 'Live statistics of an agent: memory counts by type, the last 24 hours, errors, sessions.',
    schema: z.object({ agent_id: idField }),
    async run(client, args) {
      const s = await client.agentStats(String(args.agent_id));
      return { text: `Agent ${s.agent_id}: ${s.memory_count} memories (${s.memories_24h} in 24h, ${s.errors_24h} errors), ${s.active_sessions} active of ${s.session_count} sessions.`, data: data(s) };
    },
  },
  {
    name: 'session_start',
    description: 'Start a session for an agent; memories stored with its session_id build its context.',
    schema: z.object({ agent_id: idField, metadata: opt(z.record(z.string(), z.unknown())) }),
    async run(client, args) {
      const s = await client.createSession(args as never);
      return { text: `Session ${s.session_id} started for agent ${s.agent_id}.`, data: data(s) };
    },
  },
];
