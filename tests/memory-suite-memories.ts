/** Suite: memory create (single, batch, validation), dedup, list filters, get and forget. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { call, DEDUP_WINDOW_MS, uid, type MemoryTarget, type SeedRow } from './memory-support.ts';

const H = 3_600_000;

/** Five memories of one agent at known times (3 d, 2 d, 30 h, 2 h, 10 min ago) plus one of another agent. */
export function listFixture(agent: string, other: string, now = Date.now()): SeedRow[] {
  return [
    { memory_id: `${agent}-m1`, agent_id: agent, timeMs: now - 72 * H, content: 'alpha opened the repo', event_type: 'tool_call', tags: ['api'], session_id: 's1', importance: 0.2 },
    { memory_id: `${agent}-m2`, agent_id: agent, timeMs: now - 48 * H, content: 'chose postgres', memory_type: 'decision', event_type: 'plan', tags: ['api', 'db'], session_id: 's1', importance: 0.9 },
    { memory_id: `${agent}-m3`, agent_id: agent, timeMs: now - 30 * H, content: 'the API v2 exists', memory_type: 'entity', tags: ['api_v2'], session_id: 's2', importance: 0.5 },
    { memory_id: `${agent}-m4`, agent_id: agent, timeMs: now - 2 * H, content: 'tests failed', event_type: 'error', tags: ['db'], session_id: 's2', importance: 0.1 },
    { memory_id: `${agent}-m5`, agent_id: agent, timeMs: now - H / 6, content: 'user likes brevity', memory_type: 'session', session_id: 's1', importance: 0.7 },
    { memory_id: `${other}-m1`, agent_id: other, timeMs: now - H, content: 'someone else', tags: ['api'], session_id: 's1', importance: 0.5 },
  ];
}

const ids = (body: { memories?: { memory_id: string }[]; results?: { memory_id: string }[] }) =>
  (body.memories ?? body.results ?? []).map((m) => m.memory_id.replace(/^.*-(m\d)$/, '$1'));

/** Registers the memories suite against the target returned by `t`. */
export function memoriesSuite(t: () => MemoryTarget) {
  describe('memories: create', () => {
    test('single create returns 201 with the record and defaults; get returns the same', async () => {
      const agent = uid('agent');
      const r = await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, content: 'deployed v1' });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ agent_id: agent, content: 'deployed v1', memory_type: 'episodic', event_type: 'general', org_id: 'default', importance: 0, tags: [] });
      expect(r.body.memory_id).toMatch(/^mem_[0-9a-f]{20}$/);
      expect(r.body.dedup_key).toBeString();
      expect(Math.abs(Date.parse(r.body.time) - Date.now())).toBeLessThan(60_000);
      const g = await call(t(), 'GET', `/api/v1/memories/${r.body.memory_id}`);
      expect(g.status).toBe(200);
      expect(g.body).toEqual(r.body);
    });

    test('every field round-trips', async () => {
      const m = {
        agent_id: uid('agent'), content: "it's a \"quoted\" line\nand a second one; DROP TABLE x; --", memory_type: 'decision', event_type: 'tool_call',
        session_id: 'sess-1', metadata: { tool: 'grep', nested: { n: [1, 2] } }, tags: ['api', 'v2'], importance: 0.75, dedup_key: uid('key'), parent_id: 'mem_parent',
      };
      const r = await call(t(), 'POST', '/api/v1/memories', m);
      expect(r.status).toBe(201);
      const g = await call(t(), 'GET', `/api/v1/memories/${r.body.memory_id}`);
      expect(g.body).toMatchObject(m);
    });

    const bad: [string, unknown, string][] = [
      ['no body', '', 'body'],
      ['invalid JSON', '{"agent_id":', 'JSON'],
      ['missing agent_id', { content: 'x' }, 'agent_id is required'],
      ['missing content', { agent_id: 'a' }, 'content is required'],
      ['empty content', { agent_id: 'a', content: '' }, 'content'],
      ['bad memory_type', { agent_id: 'a', content: 'x', memory_type: 'feelings' }, 'memory_type'],
      ['importance above 1', { agent_id: 'a', content: 'x', importance: 1.5 }, 'importance must be between 0.0 and 1.0'],
      ['importance below 0', { agent_id: 'a', content: 'x', importance: -0.1 }, 'importance'],
      ['importance not a number', { agent_id: 'a', content: 'x', importance: 'high' }, 'importance'],
      ['tags not an array', { agent_id: 'a', content: 'x', tags: 'api' }, 'tags'],
      ['tag with a comma', { agent_id: 'a', content: 'x', tags: ['ok', 'a,b'] }, 'tags[1]'],
      ['agent_id with spaces', { agent_id: 'bad id', content: 'x' }, 'agent_id'],
      ['metadata not an object', { agent_id: 'a', content: 'x', metadata: [1] }, 'metadata'],
    ];
    for (const [name, body, message] of bad)
      test(`400 invalid_request: ${name}`, async () => {
        const r = await call(t(), 'POST', '/api/v1/memories', body);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe('invalid_request');
        expect(r.body.message).toContain(message);
      });

    test('batch create: 201 {memories, duplicates, count}', async () => {
      const agent = uid('agent');
      const r = await call(t(), 'POST', '/api/v1/memories', { memories: [1, 2, 3].map((i) => ({ agent_id: agent, content: `step ${i}` })) });
      expect(r.status).toBe(201);
      expect(r.body.count).toBe(3);
      expect(r.body.duplicates).toEqual([]);
      expect(r.body.memories.map((m: { content: string }) => m.content)).toEqual(['step 1', 'step 2', 'step 3']);
      const l = await call(t(), 'GET', `/api/v1/memories?agent_id=${agent}&order=asc`);
      expect(l.body.memories.map((m: { content: string }) => m.content)).toEqual(['step 1', 'step 2', 'step 3']);
    });

    test('batch with one invalid item: 400 naming its index, nothing written', async () => {
      const agent = uid('agent');
      const r = await call(t(), 'POST', '/api/v1/memories', { memories: [{ agent_id: agent, content: 'ok' }, { agent_id: agent }] });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request' });
      expect(r.body.message).toContain('memories[1].content');
      expect((await call(t(), 'GET', `/api/v1/memories?agent_id=${agent}`)).body.count).toBe(0);
      expect((await call(t(), 'POST', '/api/v1/memories', { memories: [] })).status).toBe(400);
    });
  });

  describe('memories: dedup', () => {
    test('a repeat within the first second is 409 duplicate with the existing memory_id', async () => {
      const body = { agent_id: uid('agent'), content: 'same thing' };
      const first = await call(t(), 'POST', '/api/v1/memories', body);
      const second = await call(t(), 'POST', '/api/v1/memories', body);
      expect(first.status).toBe(201);
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({ error: 'duplicate', memory_id: first.body.memory_id });
      expect(second.body.message).toBeString();
    });

    test('explicit dedup_key collides across contents; derived keys differ per agent', async () => {
      const key = uid('key');
      expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: uid('a'), content: 'one', dedup_key: key })).status).toBe(201);
      expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: uid('a'), content: 'two', dedup_key: key })).status).toBe(409);
      expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: uid('a'), content: 'same' })).status).toBe(201);
      expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: uid('a'), content: 'same' })).status).toBe(201);
    });

    test('concurrent creates with one key: exactly one succeeds', async () => {
      const body = { agent_id: uid('agent'), content: 'race' };
      const res = await Promise.all(Array.from({ length: 6 }, () => call(t(), 'POST', '/api/v1/memories', body)));
      expect(res.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    });

    test('batch: repeats inside the batch and of stored keys are skipped and listed', async () => {
      const agent = uid('agent');
      const stored = await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, content: 'x', dedup_key: `${agent}-k0` });
      expect(stored.status).toBe(201);
      const items = [`${agent}-k0`, `${agent}-k1`, `${agent}-k1`, `${agent}-k2`].map((k) => ({ agent_id: agent, content: k, dedup_key: k }));
      const r = await call(t(), 'POST', '/api/v1/memories', { memories: items });
      expect(r.status).toBe(201);
      expect(r.body.count).toBe(2);
      expect(r.body.duplicates).toEqual([`${agent}-k0`, `${agent}-k1`]);
    });

    test(`outside the window (${DEDUP_WINDOW_MS} ms) the same key is accepted again`, async () => {
      const body = { agent_id: uid('agent'), content: 'periodic report' };
      expect((await call(t(), 'POST', '/api/v1/memories', body)).status).toBe(201);
      expect((await call(t(), 'POST', '/api/v1/memories', body)).status).toBe(409);
      await Bun.sleep(DEDUP_WINDOW_MS + 300);
      expect((await call(t(), 'POST', '/api/v1/memories', body)).status).toBe(201);
    });
  });

  describe('memories: list', () => {
    const agent = uid('lister');
    const other = uid('other');
    const list = (q: string) => call(t(), 'GET', `/api/v1/memories?agent_id=${agent}${q}`);
    beforeAll(async () => void (await t().seed(listFixture(agent, other))));

    test('agent filter, default order desc, count, has_more', async () => {
      const r = await list('');
      expect(r.status).toBe(200);
      expect(ids(r.body)).toEqual(['m5', 'm4', 'm3', 'm2', 'm1']);
      expect(r.body).toMatchObject({ count: 5, has_more: false });
      expect(ids((await list('&order=asc')).body)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    });

    test('string filters: session_id, memory_type, event_type', async () => {
      expect(ids((await list('&session_id=s1')).body)).toEqual(['m5', 'm2', 'm1']);
      expect(ids((await list('&memory_type=decision')).body)).toEqual(['m2']);
      expect(ids((await list('&event_type=error')).body)).toEqual(['m4']);
      expect(ids((await call(t(), 'GET', `/api/v1/memories?session_id=s1&memory_type=episodic&agent_id=${other}`)).body)).toEqual(['m1']);
    });

    test('tags: all must match, exactly (api does not match api_v2)', async () => {
      expect(ids((await list('&tags=api')).body)).toEqual(['m2', 'm1']);
      expect(ids((await list('&tags=api,db')).body)).toEqual(['m2']);
      expect(ids((await list('&tags=api_v2')).body)).toEqual(['m3']);
      expect(ids((await list('&tags=ap')).body)).toEqual([]);
    });

    test('since / until, relative and ISO 8601', async () => {
      expect(ids((await list('&since=1d')).body)).toEqual(['m5', 'm4']);
      expect(ids((await list('&since=3h')).body)).toEqual(['m5', 'm4']);
      expect(ids((await list('&since=90m')).body)).toEqual(['m5']);
      expect(ids((await list('&since=1w&until=36h')).body)).toEqual(['m2', 'm1']);
      const iso = new Date(Date.now() - 60 * H).toISOString();
      expect(ids((await list(`&until=${iso}`)).body)).toEqual(['m1']);
      expect(ids((await list(`&since=${iso}&until=1d`)).body)).toEqual(['m3', 'm2']);
    });

    test('limit, offset and has_more', async () => {
      expect((await list('&limit=2')).body).toMatchObject({ count: 2, has_more: true });
      expect(ids((await list('&limit=2&offset=2')).body)).toEqual(['m3', 'm2']);
      expect((await list('&limit=2&offset=4')).body).toMatchObject({ count: 1, has_more: false });
      expect((await list('&limit=5')).body).toMatchObject({ count: 5, has_more: false });
      expect((await list('&limit=1000')).status).toBe(200);
    });

    for (const q of ['limit=1001', 'limit=0', 'limit=abc', 'offset=-1', 'order=up', 'since=yesterday', 'until=2024-13-45', 'memory_type=x', 'tags=ok,b%01'])
      test(`400 invalid_request: ${q}`, async () => {
        const r = await list(`&${q}`);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe('invalid_request');
        expect(r.body.message).toContain(q.split('=')[0]!);
      });
  });

  describe('memories: get and forget', () => {
    test('unknown id is 404 not_found; a malformed id is 400', async () => {
      expect(await call(t(), 'GET', '/api/v1/memories/mem_doesnotexist')).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect((await call(t(), 'GET', `/api/v1/memories/${encodeURIComponent("x' OR '1'='1")}`)).status).toBe(400);
    });

    test('DELETE forgets: 204, then get 404, list and search leave it out, the key is free again', async () => {
      const body = { agent_id: uid('agent'), content: 'forget me' };
      const keep = await call(t(), 'POST', '/api/v1/memories', { ...body, content: 'keep me' });
      const m = await call(t(), 'POST', '/api/v1/memories', body);
      expect((await call(t(), 'DELETE', `/api/v1/memories/${m.body.memory_id}`)).status).toBe(204);
      expect((await call(t(), 'GET', `/api/v1/memories/${m.body.memory_id}`)).status).toBe(404);
      expect((await call(t(), 'DELETE', `/api/v1/memories/${m.body.memory_id}`)).status).toBe(404);
      expect((await call(t(), 'GET', `/api/v1/memories?agent_id=${body.agent_id}`)).body.memories.map((x: { memory_id: string }) => x.memory_id)).toEqual([keep.body.memory_id]);
      expect((await call(t(), 'POST', '/api/v1/search', { agent_id: body.agent_id })).body.count).toBe(1);
      expect((await call(t(), 'POST', '/api/v1/memories', body)).status).toBe(201);
    });
  });
}
