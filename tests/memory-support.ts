/**
 * Support for the memory service suites: targets (where a memory service runs) and a small client.
 * Three targets share one suite: the memory service in-process over a DuckDB stand-in of the
 * time-series API (fast, independent of the storage engine), the real server with both services in
 * one process, and a memory-only server pointed at a separately started time-series server.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { unpack } from 'msgpackr';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.ts';
import { createMemoryService, type SvcFetch } from '../src/memory/index.ts';
import { encodeColumnar } from '../src/memory/msgpack-encode.ts';
import { Logger } from '../src/observability/index.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from './helpers/server.ts';

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

/** The columnar MessagePack body of seed rows, in the layout the memory service writes. */
export function seedPayload(rows: SeedRow[]): Uint8Array {
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
  ]);
}

const STRING_COLUMNS = ['memory_id', 'org_id', 'agent_id', 'session_id', 'memory_type', 'event_type', 'content', 'metadata', 'tags', 'dedup_key', 'parent_id'];

/** A stand-in for the time-series API over an in-memory DuckDB table (writes are visible at once). */
export async function fakeSvc(): Promise<SvcFetch> {
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  let created = false;
  const lit = (v: unknown) => (typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v));
  const write = async (body: Uint8Array) => {
    const { columns } = unpack(body) as { columns: Record<string, unknown[]> };
    if (!created) {
      await conn.run(`CREATE TABLE memories (time TIMESTAMP, ${STRING_COLUMNS.map((c) => `${c} VARCHAR`).join(', ')}, importance DOUBLE)`);
      created = true;
    }
    const n = columns.time!.length;
    const values = Array.from({ length: n }, (_, i) => {
      const cells = [`make_timestamp(${String(columns.time![i])})`, ...STRING_COLUMNS.map((c) => lit(columns[c]![i])), lit(columns.importance![i])];
      return `(${cells.join(', ')})`;
    });
    await conn.run(`INSERT INTO memories (time, ${STRING_COLUMNS.join(', ')}, importance) VALUES ${values.join(', ')}`);
  };
  return async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/health') return Response.json({ status: 'ok' });
    if (path === '/api/v1/write/msgpack') {
      await write(new Uint8Array(await req.arrayBuffer()));
      return new Response(null, { status: 204 });
    }
    if (path === '/api/v1/query') {
      const { sql } = (await req.json()) as { sql: string };
      if (!created) return Response.json({ columns: [], types: [], data: [], row_count: 0 });
      try {
        const r = await conn.runAndReadAll(sql);
        return Response.json({ columns: r.columnNames(), types: [], data: r.getRowsJson(), row_count: r.currentRowCount });
      } catch (err) {
        return Response.json({ error: (err as Error).message }, { status: 400 });
      }
    }
    return Response.json({ error: 'no route' }, { status: 404 });
  };
}

/** The memory service in this process over the DuckDB stand-in. */
export async function fakeTarget(): Promise<MemoryTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const { config } = loadConfig({ env: {}, cwd: dir });
  const svc = await fakeSvc();
  const memory = createMemoryService({
    config: { ...config.memory, db_path: join(dir, 'memory.db'), dedup_window: `${DEDUP_WINDOW_MS / 1000}s`, bootstrap_key: MEMORY_ADMIN_KEY },
    svc,
    logger: new Logger({ level: 'error', format: 'text', bufferSize: 100 }),
  });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: memory.fetch });
  return {
    name: 'in-process, DuckDB stand-in',
    url: `http://127.0.0.1:${server.port}`,
    seed: async (rows) => void (await svc(new Request('http://svc/api/v1/write/msgpack', { method: 'POST', body: seedPayload(rows) }))),
    stop: async () => {
      await server.stop(true);
      memory.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const memoryEnv = { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY, SVC_MEMORY_DEDUP_WINDOW: `${DEDUP_WINDOW_MS / 1000}s` };

function seeder(ts: TestServer) {
  return async (rows: SeedRow[]) => {
    const res = await ts.fetch('/api/v1/write/msgpack', {
      method: 'POST',
      headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'agent_memory' },
      body: seedPayload(rows),
    });
    if (res.status !== 204) throw new Error(`seed write failed: ${res.status} ${await res.text()}`);
  };
}

/** The real server: both services in one process. */
export async function serverTarget(): Promise<MemoryTarget> {
  const s = await startServer({ env: memoryEnv });
  return { name: 'one process', url: s.memoryUrl, seed: seeder(s), stop: () => s.cleanup() };
}

/** A memory service (second server) pointed at a separately started time-series server, with a non-admin token. */
export async function remoteTarget(): Promise<MemoryTarget> {
  const ts = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' } });
  const tok = await ts.fetch('/api/v1/auth/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'remote-memory' }) });
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
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

/** A fresh identifier, so tests sharing one service never see each other's data. */
export function uid(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

export { ADMIN_TOKEN };
