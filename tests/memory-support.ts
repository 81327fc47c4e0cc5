/**
 * Support for the memory service suites: targets (where a memory service runs) and a small client.
 * Two targets share one suite, both real: the server with both services in one process, and a
 * memory-only server pointed at a separately started time-series server.
 */
import { encodeColumnar } from '../src/memory/msgpack-encode.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { jsonOrText } from './helpers/spawn.ts';

/** The fixed admin API key every target starts with. */
export const MEMORY_ADMIN_KEY = 'svcm_test_admin_key_0123456789abcdefghijklmnop';
/** Dedup window of the targets: short, so "outside the window" is testable. */
export const DEDUP_WINDOW_MS = 2000;

/** A running memory service. */
export interface MemoryTarget {
  name: string;
  url: string;
  /** Writes memory rows straight into storage (old timestamps for time-range tests). */
  seed(rows: SeedRow[]): Promise<void>;
  stop(): Promise<void>;
}

/** A row written by `seed`; missing fields take neutral values. */
export interface SeedRow {
  timeMs: number;
  memory_id: string;
  agent_id: string;
  content: string;
  memory_type?: string;
  event_type?: string;
  session_id?: string;
  tags?: string[];
  importance?: number;
  org_id?: string;
}

/** The columnar MessagePack body of seed rows, in the layout the memory service writes (`legacy`: before versions existed). */
export function seedPayload(rows: SeedRow[], legacy = false): Uint8Array {
  const s = (f: (r: SeedRow) => string) => ({ kind: 'string' as const, values: rows.map(f) });
  return encodeColumnar('memories', [
    { name: 'time', kind: 'int', values: rows.map((r) => r.timeMs * 1000) },
    { name: 'memory_id', ...s((r) => r.memory_id) },
    { name: 'org_id', ...s((r) => r.org_id ?? 'default') },
    { name: 'agent_id', ...s((r) => r.agent_id) },
    { name: 'session_id', ...s((r) => r.session_id ?? '') },
    { name: 'memory_type', ...s((r) => r.memory_type ?? 'episodic') },
    { name: 'event_type', ...s((r) => r.event_type ?? 'general') },
    { name: 'content', ...s((r) => r.content) },
    { name: 'metadata', ...s(() => '') },
    { name: 'tags', ...s((r) => (r.tags?.length ? `,${r.tags.join(',')},` : '')) },
    { name: 'dedup_key', ...s((r) => `seed_${r.memory_id}`) },
    { name: 'parent_id', ...s(() => '') },
    { name: 'importance', kind: 'float', values: rows.map((r) => r.importance ?? 0) },
    ...(legacy
      ? []
      : [
          { name: 'version', kind: 'int' as const, values: rows.map(() => 1) },
          { name: 'expires_at', kind: 'int' as const, values: rows.map(() => 0) },
          { name: 'updated_at', kind: 'int' as const, values: rows.map((r) => r.timeMs * 1000) },
        ]),
  ]);
}

/** Writes memory rows straight into the time-series store (behind the memory service), as `seedPayload` lays them out. */
export function seedMemories(server: TestServer, rows: SeedRow[], legacy = false): Promise<Response> {
  return server.fetch('/api/v1/write/msgpack', {
    method: 'POST',
    headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'agent_memory' },
    body: seedPayload(rows, legacy),
  });
}

const memoryEnv = { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY, SVC_MEMORY_DEDUP_WINDOW: `${DEDUP_WINDOW_MS / 1000}s` };

function seeder(ts: TestServer) {
  return async (rows: SeedRow[]) => {
    const res = await seedMemories(ts, rows);
    if (res.status !== 204) throw new Error(`seed write failed: ${res.status} ${await res.text()}`);
  };
}

/** The real server: both services in one process. */
export async function serverTarget(): Promise<MemoryTarget> {
  const s = await startServer({ env: memoryEnv });
  return { name: 'one process', url: s.memoryUrl, seed: seeder(s), stop: () => s.cleanup() };
}

/**
 * A memory service (second server) pointed at a separately started time-series server, with a
 * non-admin service token of it (`is_service`): only service tokens and admins reach the system database.
 */
export async function remoteTarget(): Promise<MemoryTarget> {
  const ts = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' } });
  const tok = await ts.fetch('/api/v1/auth/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'remote-memory', is_service: true, permissions: ['read', 'write', 'delete'] }) });
  const { token } = (await tok.json()) as { token: string };
  const mem = await startServer({ env: { ...memoryEnv, SVC_MEMORY_SVC_URL: ts.url, SVC_MEMORY_SVC_TOKEN: token } });
  return {
    name: 'remote time-series server',
    url: mem.memoryUrl,
    seed: seeder(ts),
    stop: async () => {
      await mem.cleanup();
      await ts.cleanup();
    },
  };
}

/** A JSON call to a memory service with the admin key (or `key`; null sends none). */
export async function call(t: MemoryTarget, method: string, path: string, body?: unknown, key: string | null = MEMORY_ADMIN_KEY) {
  const headers: Record<string, string> = {};
  if (key !== null) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(t.url + path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: jsonOrText(await res.text()) };
}

/** A fresh identifier, so tests sharing one service never see each other's data. */
export function uid(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

