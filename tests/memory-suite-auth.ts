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

  describe('admin keys act inside their own organization', () => {
    type Key = { key_id: string; org_id: string; name: string; all_orgs: boolean; revoked_at: string | null };
    const keysOf = async (key: string) => (await call(t(), 'GET', '/api/v1/keys', undefined, key)).body.keys as Key[];

    test('an organization admin lists, creates and revokes only its own keys; 403 creating for another, 404 revoking another', async () => {
      const org = uid('org-b');
      const b = await call(t(), 'POST', '/api/v1/keys', { name: 'b-admin', org_id: org, is_admin: true });
      expect(b.body).toMatchObject({ org_id: org, is_admin: true, all_orgs: false });
      const bKey = b.body.key as string;
      const defaultWorker = (await call(t(), 'POST', '/api/v1/keys', { name: 'default-worker' })).body;
      expect(defaultWorker).toMatchObject({ org_id: 'default', all_orgs: false });

      // list: only its organization's keys
      const listed = await keysOf(bKey);
      expect(listed.map((k) => k.org_id)).toEqual([org]);
      // create: its own organization by default; another organization or every organization is 403
      const own = await call(t(), 'POST', '/api/v1/keys', { name: 'b-worker' }, bKey);
      expect(own).toMatchObject({ status: 201, body: { org_id: org, is_admin: false } });
      expect(await call(t(), 'POST', '/api/v1/keys', { name: 'b-worker', org_id: org }, bKey)).toMatchObject({ status: 201, body: { org_id: org } });
      for (const body of [{ name: 'intruder', org_id: 'default' }, { name: 'intruder', org_id: 'default', is_admin: true }, { name: 'everywhere', is_admin: true, all_orgs: true }])
        expect(await call(t(), 'POST', '/api/v1/keys', body, bKey)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      expect((await keysOf(MEMORY_ADMIN_KEY)).some((k) => k.name === 'intruder' || k.name === 'everywhere')).toBe(false);
      // revoke: another organization's key is not found (its id is not disclosed) and keeps working
      expect(await call(t(), 'DELETE', `/api/v1/keys/${defaultWorker.key_id}`, undefined, bKey)).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect((await call(t(), 'GET', '/api/v1/agents', undefined, defaultWorker.key as string)).status).toBe(200);
      const bootstrapId = (await keysOf(MEMORY_ADMIN_KEY)).find((k) => k.all_orgs)!.key_id;
      expect((await call(t(), 'DELETE', `/api/v1/keys/${bootstrapId}`, undefined, bKey)).status).toBe(404);
      expect((await call(t(), 'DELETE', `/api/v1/keys/${own.body.key_id}`, undefined, bKey)).status).toBe(204);
      expect((await call(t(), 'GET', '/api/v1/agents', undefined, own.body.key as string)).status).toBe(401);
    });

    test('the bootstrap key crosses organizations, and only it (or a key it marks) makes keys that do', async () => {
      const org = uid('org-c');
      const keys = await keysOf(MEMORY_ADMIN_KEY);
      expect(new Set(keys.map((k) => k.org_id)).size).toBeGreaterThan(1);
      const bootstrap = keys.find((k) => k.all_orgs)!;
      expect(bootstrap).toMatchObject({ org_id: 'default', name: 'admin' });
      const worker = await call(t(), 'POST', '/api/v1/keys', { name: 'c-worker', org_id: org });
      expect(worker).toMatchObject({ status: 201, body: { org_id: org } });
      expect(await call(t(), 'POST', '/api/v1/keys', { name: 'c-all', org_id: org, all_orgs: true })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      const everywhere = await call(t(), 'POST', '/api/v1/keys', { name: 'c-all', org_id: org, is_admin: true, all_orgs: true });
      expect(everywhere.body).toMatchObject({ org_id: org, all_orgs: true });
      const eKey = everywhere.body.key as string;
      expect((await keysOf(eKey)).some((k) => k.org_id === 'default')).toBe(true);
      const forDefault = await call(t(), 'POST', '/api/v1/keys', { name: 'made-by-c', org_id: 'default' }, eKey);
      expect(forDefault).toMatchObject({ status: 201, body: { org_id: 'default' } });
      expect((await call(t(), 'DELETE', `/api/v1/keys/${forDefault.body.key_id}`, undefined, eKey)).status).toBe(204);
      expect((await call(t(), 'DELETE', `/api/v1/keys/${worker.body.key_id}`)).status).toBe(204);
      // The last key acting in every organization stays.
      expect((await call(t(), 'DELETE', `/api/v1/keys/${everywhere.body.key_id}`)).status).toBe(204);
      expect(await call(t(), 'DELETE', `/api/v1/keys/${bootstrap.key_id}`)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });
  });
}
