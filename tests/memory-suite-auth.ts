/** Suite: health, API-key authentication, key management routes and organization scoping. */
import { describe, expect, test } from 'bun:test';
import { call, MEMORY_ADMIN_KEY, uid, type MemoryTarget } from './memory-support.ts';

/** Registers the auth suite against the target returned by `t`. */
export function authSuite(t: () => MemoryTarget) {
  describe('health and auth', () => {
    test('/health and /ready need no key', async () => {
      const h = await call(t(), 'GET', '/health', undefined, null);
      expect(h.status).toBe(200);
      expect(h.body).toMatchObject({ status: 'ok', service: 'svc-memory' });
      expect(h.body.uptime).toBeString();
      expect(await call(t(), 'GET', '/ready', undefined, null)).toMatchObject({ status: 200, body: { svc: 'connected' } });
    });

    test('a missing or invalid key is 401 unauthorized on every API route', async () => {
      for (const [method, path] of [['GET', '/api/v1/memories'], ['POST', '/api/v1/search'], ['GET', '/api/v1/agents'], ['GET', '/api/v1/sessions'], ['GET', '/api/v1/keys']]) {
        const none = await call(t(), method!, path!, undefined, null);
        expect(none.status).toBe(401);
        expect(none.body.error).toBe('unauthorized');
        expect(none.body.message).toBeString();
        expect((await call(t(), method!, path!, undefined, 'svcm_wrong_key_0000000000000000000000')).status).toBe(401);
      }
    });

    test('x-api-key and Authorization: Bearer are both accepted', async () => {
      const bearer = await fetch(`${t().url}/api/v1/agents`, { headers: { authorization: `Bearer ${MEMORY_ADMIN_KEY}` } });
      expect(bearer.status).toBe(200);
      expect((await call(t(), 'GET', '/api/v1/agents')).status).toBe(200);
    });

    test('an unknown route is 404 not_found', async () => {
      expect(await call(t(), 'GET', '/api/v1/nothing-here')).toMatchObject({ status: 404, body: { error: 'not_found' } });
    });
  });

  describe('API keys', () => {
    test('admin creates a key (plaintext once), lists without secrets, revokes it', async () => {
      const c = await call(t(), 'POST', '/api/v1/keys', { name: 'worker' });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ name: 'worker', org_id: 'default', is_admin: false, revoked_at: null });
      expect(c.body.key).toMatch(/^svcm_[A-Za-z0-9_-]{43}$/);
      expect(c.body.key.startsWith(c.body.prefix)).toBe(true);
      expect(c.body.hash).toBeUndefined();
      const key = c.body.key as string;
      expect((await call(t(), 'GET', '/api/v1/agents', undefined, key)).status).toBe(200);
      const list = await call(t(), 'GET', '/api/v1/keys');
      const listed = list.body.keys.find((k: { key_id: string }) => k.key_id === c.body.key_id);
      expect(listed).toMatchObject({ name: 'worker', is_admin: false });
      expect(JSON.stringify(list.body)).not.toContain(key);
      expect(list.body.count).toBe(list.body.keys.length);
      expect(await call(t(), 'GET', '/api/v1/keys', undefined, key)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      expect((await call(t(), 'DELETE', `/api/v1/keys/${c.body.key_id}`)).status).toBe(204);
      expect((await call(t(), 'GET', '/api/v1/agents', undefined, key)).status).toBe(401);
      expect((await call(t(), 'GET', '/api/v1/keys')).body.keys.find((k: { key_id: string }) => k.key_id === c.body.key_id).revoked_at).toBeString();
      expect((await call(t(), 'DELETE', '/api/v1/keys/key_unknown')).status).toBe(404);
      expect((await call(t(), 'POST', '/api/v1/keys', {})).body).toMatchObject({ error: 'invalid_request', message: 'name is required' });
    });

    test('the last active admin key cannot be revoked', async () => {
      const keys = (await call(t(), 'GET', '/api/v1/keys')).body.keys as { key_id: string; name: string; is_admin: boolean; revoked_at: string | null }[];
      const admins = keys.filter((k) => k.is_admin && k.revoked_at === null);
      expect(admins.length).toBe(1);
      const r = await call(t(), 'DELETE', `/api/v1/keys/${admins[0]!.key_id}`);
      expect(r).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });

    test('keys of another organization see only their organization', async () => {
      const acme = (await call(t(), 'POST', '/api/v1/keys', { name: 'acme', org_id: 'acme' })).body.key as string;
      const agent = uid('shared-name');
      const m = await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, content: 'acme secret' }, acme);
      expect(m.body.org_id).toBe('acme');
      expect((await call(t(), 'GET', `/api/v1/memories?agent_id=${agent}`)).body.count).toBe(0);
      expect((await call(t(), 'GET', `/api/v1/memories?agent_id=${agent}`, undefined, acme)).body.count).toBe(1);
      expect((await call(t(), 'GET', `/api/v1/memories/${m.body.memory_id}`)).status).toBe(404);
      expect((await call(t(), 'POST', '/api/v1/memories', { agent_id: agent, content: 'acme secret' })).status).toBe(201);
      const a = await call(t(), 'POST', '/api/v1/agents', { name: 'acme agent' }, acme);
      expect((await call(t(), 'GET', `/api/v1/agents/${a.body.agent_id}`)).status).toBe(404);
    });
  });
}
