/**
 * The memory service end to end on a real server, both services in one process: the memory service
 * reaches the time-series API through the in-process fetch handler with its own `memory-service` token.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { agentsSuite } from './memory-suite-agents.ts';
import { authSuite } from './memory-suite-auth.ts';
import { memoriesSuite } from './memory-suite-memories.ts';
import { searchSuite } from './memory-suite-search.ts';
import { call, MEMORY_ADMIN_KEY, seedMemories, serverTarget, type MemoryTarget } from './memory-support.ts';
import { ADMIN_TOKEN, startServer } from './helpers/server.ts';

let target: MemoryTarget;
beforeAll(async () => void (target = await serverTarget()));
afterAll(async () => await target.stop());

authSuite(() => target);
memoriesSuite(() => target);
searchSuite(() => target);
agentsSuite(() => target);

describe('startup', () => {
  test('first run prints a generated admin key once to stderr; it works; a restart does not print it again', async () => {
    const s = await startServer({ keepDir: true });
    try {
      const key = /initial admin API key[^\n]*\n(svcm_[A-Za-z0-9_-]+)\n/.exec(s.output())?.[1];
      expect(key).toBeDefined();
      expect((await call({ ...target, url: s.memoryUrl }, 'GET', '/api/v1/agents', undefined, key!)).status).toBe(200);
      await s.stop();
      const again = await startServer({ dir: s.dir });
      expect(again.output()).not.toContain('initial admin API key');
      expect((await call({ ...target, url: again.memoryUrl }, 'GET', '/api/v1/agents', undefined, key!)).status).toBe(200);
      await again.cleanup();
    } finally {
      await s.stop();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });

  test('before any memory exists: list, search, stats and context answer empty; the first create works', async () => {
    const s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } });
    try {
      const fresh = { ...target, url: s.memoryUrl };
      expect(await call(fresh, 'GET', '/api/v1/memories')).toMatchObject({ status: 200, body: { memories: [], count: 0, has_more: false } });
      expect(await call(fresh, 'POST', '/api/v1/search', { query: 'anything' })).toMatchObject({ status: 200, body: { results: [], count: 0 } });
      const agent = (await call(fresh, 'POST', '/api/v1/agents', { name: 'first' })).body.agent_id;
      expect((await call(fresh, 'GET', `/api/v1/agents/${agent}/stats`)).body).toMatchObject({ memory_count: 0, memory_types: { episodic: 0 } });
      const sid = (await call(fresh, 'POST', '/api/v1/sessions', { agent_id: agent })).body.session_id;
      expect((await call(fresh, 'POST', `/api/v1/sessions/${sid}/context`, {})).body.memory_count).toBe(0);
      expect((await call(fresh, 'POST', '/api/v1/memories', { agent_id: agent, content: 'first', session_id: sid })).status).toBe(201);
      expect((await call(fresh, 'GET', '/api/v1/memories')).body.count).toBe(1);
    } finally {
      await s.cleanup();
    }
  });

  test('memories stored before versions existed (old layout) are listed, searched and patched after an upgrade', async () => {
    const old = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY, SVC_MEMORY_ENABLED: 'false' }, keepDir: true });
    const res = await seedMemories(old, [{ memory_id: 'mem_legacy1', agent_id: 'old', timeMs: Date.now() - 3_600_000, content: 'a legacy armadillo note' }], true);
    expect(res.status).toBe(204);
    await old.stop();
    const s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY }, dir: old.dir });
    try {
      const fresh = { ...target, url: s.memoryUrl };
      expect((await call(fresh, 'GET', '/api/v1/memories?agent_id=old')).body.memories).toMatchObject([{ memory_id: 'mem_legacy1', version: 1, expires_at: null }]);
      expect((await call(fresh, 'POST', '/api/v1/search', { query: 'armadillos' })).body.results).toMatchObject([{ memory_id: 'mem_legacy1' }]);
      expect((await call(fresh, 'PATCH', '/api/v1/memories/mem_legacy1', { importance: 0.5 })).body).toMatchObject({ version: 2, importance: 0.5 });
      expect((await call(fresh, 'GET', '/api/v1/agents/old/stats')).body).toMatchObject({ memory_count: 1 });
      expect((await call(fresh, 'GET', '/api/v1/memories')).body.count).toBe(1);
    } finally {
      await s.stop();
      rmSync(old.dir, { recursive: true, force: true });
    }
  });

  test('purge with delete.enabled off erases: the switch guards users\' deletes, not the memory service\'s own duty', async () => {
    const created = await call(target, 'POST', '/api/v1/memories', { agent_id: 'purge-off', content: 'erased though deletes are off' });
    const r = await call(target, 'DELETE', `/api/v1/memories/${created.body.memory_id}?purge=true`);
    expect(r.status).toBe(204);
    expect((await call(target, 'GET', `/api/v1/memories/${created.body.memory_id}`)).status).toBe(404);
  });

  test('the in-process memory service uses a dedicated non-admin time-series token', async () => {
    const s = await startServer();
    try {
      const res = await s.fetch('/api/v1/auth/tokens', { token: ADMIN_TOKEN });
      const { tokens } = (await res.json()) as { tokens: { name: string; is_admin: boolean; is_service: boolean }[] };
      expect(tokens.find((x) => x.name === 'memory-service')).toMatchObject({ is_admin: false, is_service: true });
    } finally {
      await s.cleanup();
    }
  });

  // Forgotten ids travel to the time-series service as one JSON literal (memory-sql.ts idListSql):
  // reads must leave out exactly them, also ids holding quotes and commas.
  test('thousands of forgotten memories: list, stats, structured search and get leave out exactly them', async () => {
    const s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } });
    try {
      const now = Date.now();
      const idOf = (k: number) => (k === 1 ? "mem_o'dd,\"id" : `mem_many${k}`);
      const rows = Array.from({ length: 3000 }, (_, k) => ({ memory_id: idOf(k), agent_id: 'many', timeMs: now - 3_600_000 + k, content: `walrus note ${k}`, tags: [k % 3 === 0 ? 'keep' : 'drop'] }));
      const res = await seedMemories(s, rows);
      expect(res.status).toBe(204);
      const mem = { name: 'many', url: s.memoryUrl, seed: async () => {}, stop: async () => {} };
      expect(await call(mem, 'POST', '/api/v1/memories/forget', { agent_id: 'many', tags: ['drop'] })).toMatchObject({ status: 200, body: { forgotten: 2000 } });
      const kept = rows.filter((r) => r.tags[0] === 'keep').map((r) => r.memory_id).sort();
      const ids = (b: { memories?: { memory_id: string }[]; results?: { memory_id: string }[] }) => (b.memories ?? b.results ?? []).map((m) => m.memory_id).sort();
      for (const path of ['/api/v1/memories?agent_id=many&limit=1000', '/api/v1/memories?limit=1000']) {
        const page = (await call(mem, 'GET', path)).body;
        expect(page.has_more).toBe(false);
        expect(ids(page)).toEqual(kept);
      }
      expect((await call(mem, 'GET', '/api/v1/agents/many/stats')).body).toMatchObject({ memory_count: 1000 });
      expect(ids((await call(mem, 'POST', '/api/v1/search', { agent_id: 'many', limit: 1000 })).body)).toEqual(kept);
      expect((await call(mem, 'GET', '/api/v1/memories/mem_many2')).status).toBe(404);
      expect((await call(mem, 'GET', '/api/v1/memories/mem_many3')).status).toBe(200);
    } finally {
      await s.cleanup();
    }
  }, 60_000);

  // The in-process memory service reads large time-series results (here 60,000 rows, streamed in
  // several parts): every part must arrive intact, or forgetting picks the wrong memories.
  test('a large storage result read in process arrives intact: bulk forget of 60,000 memories', async () => {
    const s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } });
    try {
      const now = Date.now();
      for (let start = 0; start < 60_000; start += 20_000) {
        const rows = Array.from({ length: 20_000 }, (_, k) => ({ memory_id: `mem_big${start + k}`, agent_id: 'bulk-big', timeMs: now - 3_600_000 + start + k, content: `note ${start + k}` }));
        const res = await seedMemories(s, rows);
        expect(res.status).toBe(204);
      }
      const mem = { name: 'big', url: s.memoryUrl, seed: async () => {}, stop: async () => {} };
      expect((await call(mem, 'GET', '/api/v1/agents/bulk-big/stats')).body).toMatchObject({ memory_count: 60_000 });
      expect(await call(mem, 'POST', '/api/v1/memories/forget', { agent_id: 'bulk-big' })).toMatchObject({ status: 200, body: { forgotten: 60_000 } });
      expect((await call(mem, 'GET', '/api/v1/memories?agent_id=bulk-big')).body).toMatchObject({ count: 0 });
    } finally {
      await s.cleanup();
    }
  }, 240_000);
});
