/**
 * Memory service v2 end to end, through the typed client: versions (PATCH, history), expiry,
 * metadata and parent filters, full-text search over every memory (an old rare word among more than
 * the old candidate window; stemming; explain; the index caught up from storage after a restart),
 * forgetting and purging (one and in bulk) with a byte-level check that purged content is gone.
 */
import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryApiError, MemoryClient } from '../src/memory/client/memory-client.ts';
import { MEMORY_ADMIN_KEY, seedMemories, uid } from './memory-support.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// A candidate pool far smaller than the haystack below: search must not be a newest-N window.
const ENV = { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY, SVC_DELETE_ENABLED: 'true', SVC_WAL_ENABLED: 'true', SVC_MEMORY_SEARCH_CANDIDATES: '100' };
let server: TestServer;
let client: MemoryClient;

beforeAll(async () => {
  server = await startServer({ env: ENV, keepDir: true });
  client = new MemoryClient({ baseUrl: server.memoryUrl, apiKey: MEMORY_ADMIN_KEY });
});
afterAll(async () => {
  await server.stop();
  rmSync(server.dir, { recursive: true, force: true });
});

/** The status of a client call that must fail. */
async function failure(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MemoryApiError) return { status: err.status, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the call succeeded');
}

/** Files under `dir` whose bytes contain `marker`. */
function filesContaining(dir: string, marker: string): string[] {
  const needle = Buffer.from(marker);
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Waits (bounded) until `check` returns true. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await Bun.sleep(100);
  }
}

describe('versions and expiry', () => {
  test('PATCH writes a new version; get, list and search see only it; history lists every version', async () => {
    const agent = uid('patcher');
    const m = await client.createMemory({ agent_id: agent, content: 'the deploy target is staging', tags: ['deploy'], importance: 0.2 });
    expect(m).toMatchObject({ version: 1, expires_at: null });
    const v2 = await client.patchMemory(m.memory_id, { content: 'the deploy target is production', importance: 0.9, metadata: { env: 'prod' } });
    expect(v2).toMatchObject({ memory_id: m.memory_id, version: 2, time: m.time, content: 'the deploy target is production', importance: 0.9, tags: ['deploy'], metadata: { env: 'prod' }, dedup_key: m.dedup_key });
    expect(v2.updated_at > m.updated_at).toBe(true);
    expect(await client.getMemory(m.memory_id)).toEqual(v2);
    const list = await client.listMemories({ agent_id: agent });
    expect(list.memories.map((x) => x.version)).toEqual([2]);
    expect((await client.search({ agent_id: agent, query: 'staging' })).results).toEqual([]);
    expect((await client.search({ agent_id: agent, query: 'production' })).results.map((x) => x.version)).toEqual([2]);
    const h = await client.history(m.memory_id);
    expect(h.versions.map((x) => [x.version, x.content])).toEqual([[1, 'the deploy target is staging'], [2, 'the deploy target is production']]);
    // Stats answer for an agent that was never registered but has memories; 404 only with neither.
    expect((await client.agentStats(agent)).memory_count).toBe(1);
    expect(await failure(client.agentStats(uid('nobody')))).toMatchObject({ status: 404 });
  });

  test('PATCH errors: empty change 400, bad field 400 naming it, unknown 404', async () => {
    const m = await client.createMemory({ agent_id: uid('p'), content: 'x' });
    expect(await failure(client.patchMemory(m.memory_id, {}))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((await failure(client.patchMemory(m.memory_id, { importance: 3 }))).message).toContain('importance');
    expect((await failure(client.patchMemory(m.memory_id, { expires_at: 'tomorrow' }))).message).toContain('expires_at');
    expect(await failure(client.patchMemory('mem_nope', { importance: 0.5 }))).toMatchObject({ status: 404 });
  });

  test('expired memories vanish from get, list, search, context and stats; PATCH can set or clear expiry', async () => {
    const agent = uid('expiring');
    const session = await client.createSession({ agent_id: agent });
    const past = new Date(Date.now() - 1000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const gone = await client.createMemory({ agent_id: agent, session_id: session.session_id, content: 'ephemeral kiwi note', expires_at: past });
    const kept = await client.createMemory({ agent_id: agent, session_id: session.session_id, content: 'durable kiwi note', expires_at: future });
    expect(kept.expires_at).toBe(future.replace('Z', '000Z'));
    expect(await failure(client.getMemory(gone.memory_id))).toMatchObject({ status: 404 });
    expect((await client.listMemories({ agent_id: agent })).memories.map((x) => x.memory_id)).toEqual([kept.memory_id]);
    expect((await client.search({ agent_id: agent, query: 'kiwi' })).results.map((x) => x.memory_id)).toEqual([kept.memory_id]);
    expect((await client.context(session.session_id)).memory_count).toBe(1);
    expect((await client.agentStats(agent)).memory_count).toBe(1);
    await client.patchMemory(kept.memory_id, { expires_at: past });
    expect((await client.listMemories({ agent_id: agent })).count).toBe(0);
    expect((await client.search({ agent_id: agent, query: 'kiwi' })).count).toBe(0);
  });
});

describe('filters and ranking', () => {
  test('metadata (exact, top-level keys) and parent_id filter list and search', async () => {
    const agent = uid('meta');
    const root = await client.createMemory({ agent_id: agent, content: 'plan the apollo launch', metadata: { project: 'apollo', phase: 1, done: false } });
    await client.createMemory({ agent_id: agent, content: 'apollo launch step one', parent_id: root.memory_id, metadata: { project: 'apollo', phase: 2, done: true } });
    await client.createMemory({ agent_id: agent, content: 'gemini launch notes', metadata: { project: 'gemini', phase: 1 } });
    const contents = (ms: { content: string }[]) => ms.map((m) => m.content).sort();
    expect(contents((await client.listMemories({ agent_id: agent, metadata: { project: 'apollo' } })).memories)).toEqual(['apollo launch step one', 'plan the apollo launch']);
    expect(contents((await client.listMemories({ agent_id: agent, metadata: { phase: 1 } })).memories)).toEqual(['gemini launch notes', 'plan the apollo launch']);
    expect(contents((await client.listMemories({ agent_id: agent, metadata: { done: true } })).memories)).toEqual(['apollo launch step one']);
    expect(contents((await client.listMemories({ agent_id: agent, parent_id: root.memory_id })).memories)).toEqual(['apollo launch step one']);
    expect(contents((await client.search({ agent_id: agent, query: 'launch', metadata: { phase: 1 } })).results)).toEqual(['gemini launch notes', 'plan the apollo launch']);
    expect(contents((await client.search({ agent_id: agent, query: 'launch', metadata: { project: 'apollo', done: false } })).results)).toEqual(['plan the apollo launch']);
    expect(contents((await client.search({ agent_id: agent, parent_id: root.memory_id })).results)).toEqual(['apollo launch step one']);
    expect((await failure(client.listMemories({ agent_id: agent, metadata: { 'bad"key': 1 } }))).message).toContain('metadata');
    expect((await failure(client.call('GET', `/api/v1/memories?metadata=notjson`))).message).toContain('metadata');
  });

  test('explain returns each score part; importance lifts an equally relevant memory', async () => {
    const agent = uid('explain');
    await client.createMemories([
      { agent_id: agent, content: 'the cache warms on boot', importance: 0 },
      { agent_id: agent, content: 'the cache warms on demand', importance: 1 },
    ]);
    const r = await client.search({ agent_id: agent, query: 'cache', explain: true });
    expect(r.results.map((x) => x.content)).toEqual(['the cache warms on demand', 'the cache warms on boot']);
    // Equal text (1) and recency (~1, seconds old); importance 1 against 0: scores 1.0 and 0.85 by the
    // documented weights (0.6 text, 0.25 recency, 0.15 importance).
    expect(r.results.map((x) => Object.keys(x.explanation!).sort())).toEqual([['bm25', 'importance', 'recency', 'text'], ['bm25', 'importance', 'recency', 'text']]);
    expect(r.results.map((x) => [x.explanation!.text, x.explanation!.importance])).toEqual([[1, 1], [1, 0]]);
    for (const [hit, score] of [[r.results[0]!, 1], [r.results[1]!, 0.85]] as const) {
      expect(hit.explanation!.recency).toBeCloseTo(1, 4);
      expect(hit.score).toBeCloseTo(score, 4);
    }
    expect((await client.search({ agent_id: agent, query: 'cache' })).results[0]!.explanation).toBeUndefined();
  });

  test('an old rare word is found behind 30 times more newer memories than the candidate pool; stemming and CJK trigrams match', async () => {
    const agent = uid('haystack');
    const needle = await client.createMemory({ agent_id: agent, content: 'the quokka escaped from enclosure seven' });
    for (let b = 0; b < 3; b++)
      await client.createMemories(Array.from({ length: 1000 }, (_, i) => ({ agent_id: agent, content: `routine heartbeat ${b}-${i} all systems nominal, nothing escaped` })));
    const r = await client.search({ agent_id: agent, query: 'Quokkas escaping', limit: 5 });
    expect(r.results[0]!.memory_id).toBe(needle.memory_id);
    expect(r.results[1]!.content).toContain('nothing escaped');
    expect((await client.search({ agent_id: agent, query: 'quokka' })).results.map((x) => x.memory_id)).toEqual([needle.memory_id]);
    // Without an agent: over every memory of the organization (the ranking without a per-match join).
    expect((await client.search({ query: 'Quokkas escaping', limit: 5 })).results[0]!.memory_id).toBe(needle.memory_id);
    expect((await client.search({ query: 'quokka' })).results.map((x) => x.memory_id)).toEqual([needle.memory_id]);
    await client.createMemory({ agent_id: agent, content: '我们今天讨论了数据库系统的设计' });
    expect((await client.search({ agent_id: agent, query: '数据库系统' })).results.map((x) => x.content)).toEqual(['我们今天讨论了数据库系统的设计']);
  });
});

describe('forget and purge', () => {
  test('purge erases the content from every file under the data directory (Parquet, WAL, index, history)', async () => {
    const agent = uid('purger');
    const marker = `zqxpurge${Math.random().toString(36).slice(2, 10).replace(/\d/g, 'k')}`;
    const m = await client.createMemory({ agent_id: agent, content: `secret ${marker} first`, metadata: { note: marker } });
    await client.patchMemory(m.memory_id, { content: `secret ${marker} second` });
    const other = await client.createMemory({ agent_id: agent, content: 'a neighbour that stays' });
    expect((await client.search({ agent_id: agent, query: marker })).count).toBe(1);
    // Flush to Parquet first, so the purge has files to rewrite, not only buffered rows.
    expect((await server.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBeLessThan(300);
    expect(filesContaining(server.dir, marker).length).toBeGreaterThan(0);

    await client.deleteMemory(m.memory_id, { purge: true });
    expect(await failure(client.getMemory(m.memory_id))).toMatchObject({ status: 404 });
    expect(await failure(client.history(m.memory_id))).toMatchObject({ status: 404 });
    expect((await client.search({ agent_id: agent, query: marker })).count).toBe(0);
    expect((await client.getMemory(other.memory_id)).content).toBe('a neighbour that stays');
    expect(await failure(client.deleteMemory(m.memory_id, { purge: true }))).toMatchObject({ status: 404 });
    // Replaced Parquet files are reaped and WAL segments retired once idle: bounded, not instant.
    await until(`no file under the data directory holds ${marker}`, () => filesContaining(server.dir, marker).length === 0);
  }, 60_000);

  test('bulk forget hides, bulk purge erases; purged memories leave no tombstone behind', async () => {
    const agent = uid('bulk');
    await client.createMemories([
      { agent_id: agent, content: 'alpha one', tags: ['t1'] },
      { agent_id: agent, content: 'alpha two', tags: ['t1', 't2'] },
      { agent_id: agent, content: 'alpha three', tags: ['t2'] },
    ]);
    expect(await client.forget({ agent_id: agent, tags: ['t1'] })).toEqual({ forgotten: 2, purged: false });
    expect((await client.listMemories({ agent_id: agent })).memories.map((x) => x.content)).toEqual(['alpha three']);
    expect((await client.search({ agent_id: agent, query: 'alpha' })).count).toBe(1);
    const db = new Database(join(server.dir, 'data', 'memory.db'), { readonly: true });
    const tombstones = () => db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM tombstones WHERE agent_id = ?').get(agent)!.n;
    try {
      expect(tombstones()).toBe(2);
      // Purging takes the forgotten ones too: erasure is about what storage holds.
      expect(await client.forget({ agent_id: agent, purge: true })).toEqual({ forgotten: 3, purged: true });
      expect(tombstones()).toBe(0);
    } finally {
      db.close();
    }
    expect((await client.listMemories({ agent_id: agent })).count).toBe(0);
    // A purged memory's dedup key is free again: the same content is stored anew, not a duplicate.
    expect((await client.createMemory({ agent_id: agent, content: 'alpha one' })).content).toBe('alpha one');
    expect(await failure(client.forget({}))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect((await failure(client.call('DELETE', '/api/v1/memories/mem_x?purge=yes'))).message).toContain('purge');
  });

  test('bulk forget by session and by time: only the matching memories go', async () => {
    const agent = uid('bulk-when');
    const session = await client.createSession({ agent_id: agent });
    const inSession = await client.createMemory({ agent_id: agent, session_id: session.session_id, content: 'said in the session' });
    const outside = await client.createMemory({ agent_id: agent, content: 'said outside any session' });
    expect(await client.forget({ session_id: session.session_id })).toEqual({ forgotten: 1, purged: false });
    expect((await client.listMemories({ agent_id: agent })).memories.map((x) => x.memory_id)).toEqual([outside.memory_id]);
    expect(await failure(client.getMemory(inSession.memory_id))).toMatchObject({ status: 404 });
    // `before` takes a time input ('2d': two days ago): only memories older than that go.
    const old = uid('old');
    const res = await seedMemories(server, [{ memory_id: old, agent_id: agent, timeMs: Date.now() - 3 * 86_400_000, content: 'an old note' }]);
    expect(res.status).toBe(204);
    expect((await client.listMemories({ agent_id: agent })).count).toBe(2);
    expect(await client.forget({ agent_id: agent, before: '2d' })).toEqual({ forgotten: 1, purged: false });
    expect((await client.listMemories({ agent_id: agent })).memories.map((x) => x.memory_id)).toEqual([outside.memory_id]);
  });
});

describe('index catch-up', () => {
  test('memories written to storage behind the index are searchable after a restart; tombstones of memories gone from storage are dropped', async () => {
    const agent = uid('behind');
    const id = uid('seeded');
    const res = await seedMemories(server, [{ memory_id: id, agent_id: agent, timeMs: Date.now() - 400 * 86_400_000, content: 'an ancient wombat sighting' }]);
    expect(res.status).toBe(204);
    expect((await client.search({ agent_id: agent, query: 'wombat' })).count).toBe(0);
    // A forgotten memory whose rows then leave storage another way (as retention would remove them):
    // its tombstone hides nothing any more, and the catch-up drops it.
    const forgotten = await client.createMemory({ agent_id: agent, content: 'a forgotten badger' });
    await client.deleteMemory(forgotten.memory_id);
    const del = await server.fetch('/api/v1/delete', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ database: 'agent_memory', measurement: 'memories', where: `memory_id = '${forgotten.memory_id}'`, confirm: true }),
    });
    expect(del.status).toBe(200);
    const tombstoned = () => {
      const db = new Database(join(server.dir, 'data', 'memory.db'), { readonly: true });
      try {
        return db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM tombstones WHERE memory_id = ?').get(forgotten.memory_id)!.n;
      } finally {
        db.close();
      }
    };
    expect(tombstoned()).toBe(1);
    await server.stop();
    server = await startServer({ env: ENV, dir: server.dir });
    client = new MemoryClient({ baseUrl: server.memoryUrl, apiKey: MEMORY_ADMIN_KEY });
    expect((await client.search({ agent_id: agent, query: 'wombats' })).results.map((x) => x.memory_id)).toEqual([id]);
    expect(tombstoned()).toBe(0);
    expect((await client.search({ agent_id: agent, query: 'badger' })).count).toBe(0);
  }, 60_000);
});
