/** Suite: agents (CRUD, live stats against known data) and sessions (lifecycle, context, max_tokens). */
import { beforeAll, describe, expect, test } from 'bun:test';
import { call, uid, type MemoryTarget } from './memory-support.ts';

const H = 3_600_000;

/** Registers the agents and sessions suites against the target returned by `t`. */
export function agentsSuite(t: () => MemoryTarget) {
  describe('agents', () => {
    test('create 201, list, get with updated_at, unknown 404, delete 204 (memories stay)', async () => {
      const r = await call(t(), 'POST', '/api/v1/agents', { name: 'coder', description: 'writes code', config: { model: 'x', temperature: 0.2 } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ name: 'coder', description: 'writes code', config: { model: 'x', temperature: 0.2 } });
      expect(r.body.agent_id).toMatch(/^agt_/);
      expect(Date.parse(r.body.created_at)).toBeGreaterThan(0);
      const id = r.body.agent_id;
      const list = await call(t(), 'GET', '/api/v1/agents');
      expect(list.body.count).toBe(list.body.agents.length);
      expect(list.body.agents.find((a: { agent_id: string }) => a.agent_id === id)).toEqual({ agent_id: id, name: 'coder', description: 'writes code', created_at: r.body.created_at });
      const g = await call(t(), 'GET', `/api/v1/agents/${id}`);
      expect(g.body).toMatchObject({ ...r.body, updated_at: r.body.created_at });
      await call(t(), 'POST', '/api/v1/memories', { agent_id: id, content: 'I exist' });
      expect((await call(t(), 'DELETE', `/api/v1/agents/${id}`)).status).toBe(204);
      expect(await call(t(), 'GET', `/api/v1/agents/${id}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect((await call(t(), 'DELETE', `/api/v1/agents/${id}`)).status).toBe(404);
      // Stats follow the memories, registered or not.
      expect(await call(t(), 'GET', `/api/v1/agents/${id}/stats`)).toMatchObject({ status: 200, body: { agent_id: id, memory_count: 1 } });
      expect((await call(t(), 'GET', `/api/v1/agents/${uid('nobody')}/stats`)).status).toBe(404);
      expect((await call(t(), 'GET', `/api/v1/memories?agent_id=${id}`)).body.count).toBe(1);
    });

    for (const [body, field] of [[{}, 'name is required'], [{ name: '' }, 'name'], [{ name: 'x', config: 'nope' }, 'config']] as const)
      test(`400 invalid_request: ${JSON.stringify(body)}`, async () => {
        const r = await call(t(), 'POST', '/api/v1/agents', body);
        expect(r).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
        expect(r.body.message).toContain(field);
      });

    test('stats are computed live from known data', async () => {
      const { body: agent } = await call(t(), 'POST', '/api/v1/agents', { name: 'stats' });
      const id = agent.agent_id as string;
      const mk = (content: string, memory_type = 'episodic', event_type = 'general') => ({ agent_id: id, content, memory_type, event_type });
      const batch = [mk('a'), mk('b'), mk('c', 'episodic', 'error'), mk('d', 'decision'), mk('e', 'decision'), mk('f', 'entity')];
      expect((await call(t(), 'POST', '/api/v1/memories', { memories: batch })).body.count).toBe(6);
      await t().seed([
        { memory_id: uid('old'), agent_id: id, timeMs: Date.now() - 48 * H, content: 'old', event_type: 'error' },
        { memory_id: uid('old'), agent_id: id, timeMs: Date.now() - 30 * H, content: 'older' },
        { memory_id: uid('x'), agent_id: uid('someone-else'), timeMs: Date.now(), content: 'not mine' },
      ]);
      const sessions = await Promise.all([1, 2, 3].map(() => call(t(), 'POST', '/api/v1/sessions', { agent_id: id })));
      await call(t(), 'PUT', `/api/v1/sessions/${sessions[0]!.body.session_id}`, { status: 'closed' });
      const s = await call(t(), 'GET', `/api/v1/agents/${id}/stats`);
      expect(s.status).toBe(200);
      expect(s.body).toEqual({
        agent_id: id, memory_count: 8, memories_24h: 6, errors_24h: 1, session_count: 3, active_sessions: 2,
        memory_types: { episodic: 5, session: 0, decision: 2, entity: 1 },
      });
      const decision = (await call(t(), 'GET', `/api/v1/memories?agent_id=${id}&memory_type=decision&limit=1`)).body.memories[0];
      await call(t(), 'DELETE', `/api/v1/memories/${decision.memory_id}`);
      expect((await call(t(), 'GET', `/api/v1/agents/${id}/stats`)).body).toMatchObject({ memory_count: 7, memory_types: { decision: 1 } });
    });
  });

  describe('sessions', () => {
    test('create 201 active, list with agent filter, get, PUT close and metadata', async () => {
      const agent = uid('agent');
      const r = await call(t(), 'POST', '/api/v1/sessions', { agent_id: agent, metadata: { task: 'fix bug' } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ agent_id: agent, status: 'active', metadata: { task: 'fix bug' } });
      const id = r.body.session_id as string;
      await call(t(), 'POST', '/api/v1/sessions', { agent_id: uid('agent') });
      const l = await call(t(), 'GET', `/api/v1/sessions?agent_id=${agent}`);
      expect(l.body).toEqual({ sessions: [{ session_id: id, agent_id: agent, status: 'active', created_at: r.body.created_at }], count: 1 });
      expect((await call(t(), 'GET', '/api/v1/sessions')).body.count).toBeGreaterThan(1);
      const g = await call(t(), 'GET', `/api/v1/sessions/${id}`);
      expect(g.body).toMatchObject({ session_id: id, agent_id: agent, status: 'active', metadata: { task: 'fix bug' }, updated_at: r.body.created_at });
      await Bun.sleep(5);
      const closed = await call(t(), 'PUT', `/api/v1/sessions/${id}`, { status: 'closed' });
      expect(closed.body).toMatchObject({ session_id: id, agent_id: agent, status: 'closed' });
      expect(Date.parse(closed.body.updated_at)).toBeGreaterThan(Date.parse(r.body.created_at));
      const meta = await call(t(), 'PUT', `/api/v1/sessions/${id}`, { metadata: { task: 'done' } });
      expect(meta.body).toMatchObject({ status: 'closed', metadata: { task: 'done' } });
      expect((await call(t(), 'GET', `/api/v1/sessions/${id}`)).body).toMatchObject({ status: 'closed', metadata: { task: 'done' } });
    });

    test('errors: 400 on bad input, 404 on unknown, closed cannot reopen', async () => {
      expect((await call(t(), 'POST', '/api/v1/sessions', {})).body).toMatchObject({ error: 'invalid_request', message: 'agent_id is required' });
      const { body } = await call(t(), 'POST', '/api/v1/sessions', { agent_id: uid('agent') });
      expect((await call(t(), 'PUT', `/api/v1/sessions/${body.session_id}`, {})).body.error).toBe('invalid_request');
      expect((await call(t(), 'PUT', `/api/v1/sessions/${body.session_id}`, { status: 'paused' })).body.message).toContain('status');
      expect((await call(t(), 'PUT', '/api/v1/sessions/ses_unknown', { status: 'closed' })).status).toBe(404);
      expect((await call(t(), 'GET', '/api/v1/sessions/ses_unknown')).body.error).toBe('not_found');
      await call(t(), 'PUT', `/api/v1/sessions/${body.session_id}`, { status: 'closed' });
      expect((await call(t(), 'PUT', `/api/v1/sessions/${body.session_id}`, { status: 'active' })).status).toBe(400);
    });
  });

  describe('session context', () => {
    let sid = '';
    const agent = uid('ctx');
    const ctx = (body: Record<string, unknown> = {}) => call(t(), 'POST', `/api/v1/sessions/${sid}/context`, body);
    beforeAll(async () => {
      sid = (await call(t(), 'POST', '/api/v1/sessions', { agent_id: agent })).body.session_id;
      await t().seed([{ memory_id: uid('old'), agent_id: agent, session_id: sid, timeMs: Date.now() - 72 * H, content: 'old note from last week' }]);
      const items = [
        ['opened the repo', 'episodic'], ['use postgres because of joins', 'decision'], ['service api runs on port 8080', 'entity'],
        ['ran the tests\nall green', 'episodic'], ['user prefers short answers', 'session'],
      ];
      for (const [content, memory_type] of items) expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, session_id: sid, content, memory_type })).status).toBe(201);
      await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, session_id: 'other-session', content: 'elsewhere' });
    });

    test('layout: heading, sections with counts, one bullet per memory, newest first', async () => {
      const r = await ctx({ since: '1d' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ session_id: sid, memory_count: 5 });
      expect(r.body.context).toBe(
        `# Session Context (${sid})\n\n## Recent Actions (2)\n- ran the tests all green\n- opened the repo\n\n` +
          `## Decisions (1)\n- use postgres because of joins\n\n## Entities (1)\n- service api runs on port 8080\n\n` +
          `## Session Notes (1)\n- user prefers short answers\n`,
      );
      const all = await ctx();
      expect(all.body.memory_count).toBe(6);
      expect(all.body.context).toContain('## Recent Actions (3)\n- ran the tests all green\n- opened the repo\n- old note from last week\n');
    });

    test('order, include_types, exclude_types, until', async () => {
      expect((await ctx({ order: 'asc' })).body.context).toContain('## Recent Actions (3)\n- old note from last week\n- opened the repo\n- ran the tests all green\n');
      const inc = await ctx({ include_types: ['decision'] });
      expect(inc.body.memory_count).toBe(1);
      expect(inc.body.context).toBe(`# Session Context (${sid})\n\n## Recent Actions (0)\n\n## Decisions (1)\n- use postgres because of joins\n\n## Entities (0)\n`);
      expect((await ctx({ exclude_types: ['episodic', 'session'] })).body.memory_count).toBe(2);
      expect((await ctx({ until: '2d' })).body.memory_count).toBe(1);
    });

    test('max_tokens is never exceeded and the oldest memories are dropped first', async () => {
      const recent = (await ctx({ since: '1d' })).body.context as string;
      const fit = Math.ceil(recent.length / 4);
      const r = await ctx({ max_tokens: fit });
      expect(r.body.context).toBe(recent);
      expect(r.body).toMatchObject({ memory_count: 5, estimated_tokens: fit, truncated: true });
      for (const max of [fit - 1, fit - 10, 40, 32]) {
        const small = await ctx({ max_tokens: max });
        expect(small.status).toBe(200);
        expect(Math.ceil(small.body.context.length / 4)).toBeLessThanOrEqual(max);
        expect(small.body.context).not.toContain('old note');
        if (small.body.memory_count > 0) expect(small.body.context).toContain('user prefers short answers');
      }
      expect((await ctx({ max_tokens: 40 })).body.memory_count).toBeLessThan(5);
      expect((await ctx({ max_tokens: 5 })).body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('max_tokens') });
      expect((await ctx({ max_tokens: 0 })).status).toBe(400);
      expect((await ctx({ include_types: ['x'] })).status).toBe(400);
      expect((await call(t(), 'POST', '/api/v1/sessions/ses_unknown/context', {})).status).toBe(404);
    });
  });
}
