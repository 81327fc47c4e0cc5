import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.cleanup();
});

async function createToken(name: string, extra: Record<string, unknown> = {}) {
  const res = await json(server, 'POST', '/api/v1/auth/tokens', { name, ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string; name: string; is_admin: boolean; created_at: string };
}

describe('credential forms', () => {
  test('Bearer, Token and x-api-key all authenticate', async () => {
    const forms: Record<string, string>[] = [{ authorization: `Bearer ${ADMIN_TOKEN}` }, { authorization: `Token ${ADMIN_TOKEN}` }, { 'x-api-key': ADMIN_TOKEN }];
    for (const headers of forms) {
      const res = await fetch(server.url + '/api/v1/auth/tokens', { headers });
      expect(res.status).toBe(200);
    }
  });

  test('p= is accepted on /write only', async () => {
    const onWrite = await fetch(`${server.url}/write?db=authdb&p=${ADMIN_TOKEN}`, { method: 'POST', body: 'm v=1' });
    expect(onWrite.status).not.toBe(401);
    const elsewhere = await fetch(`${server.url}/api/v1/auth/tokens?p=${ADMIN_TOKEN}`);
    expect(elsewhere.status).toBe(401);
  });

  test('missing and invalid credentials give 401 with a JSON error', async () => {
    const none = await fetch(server.url + '/api/v1/auth/tokens');
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: string }).error).toContain('authentication required');
    const bad = await fetch(server.url + '/api/v1/auth/tokens', { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(typeof ((await bad.json()) as { error: string }).error).toBe('string');
  });
});

describe('public, ordinary and admin routes', () => {
  test('public routes answer without credentials', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/api/v1/metrics']) {
      const res = await fetch(server.url + path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  test('an ordinary token gets 403 on admin routes and passes ordinary ones', async () => {
    const { token } = await createToken('ordinary');
    const adminRoutes: [string, string][] = [
      ['GET', '/api/v1/auth/tokens'],
      ['POST', '/api/v1/auth/tokens'],
      ['GET', '/api/v1/auth/tokens/x'],
      ['PATCH', '/api/v1/auth/tokens/x'],
      ['DELETE', '/api/v1/auth/tokens/x'],
      ['POST', '/api/v1/auth/tokens/x/rotate'],
      ['POST', '/api/v1/auth/tokens/x/revoke'],
      ['GET', '/api/v1/auth/cache/stats'],
      ['POST', '/api/v1/auth/cache/invalidate'],
    ];
    for (const [method, path] of adminRoutes) {
      const res = await json(server, method, path, method === 'GET' ? undefined : {}, token);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      const anon = await fetch(server.url + path, { method });
      expect({ method, path, status: anon.status }).toEqual({ method, path, status: 401 });
    }
    const verify = await json(server, 'GET', '/api/v1/auth/verify', undefined, token);
    expect(verify.status).toBe(200);
    expect(verify.body.token_info.is_admin).toBe(false);
  });

  test('unknown routes are 404 JSON for authenticated callers', async () => {
    const res = await json(server, 'GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error).toContain('/api/v1/nothing-here');
  });
});

describe('token lifecycle', () => {
  test('create returns the secret once; list and get never show it', async () => {
    const created = await createToken('lifecycle', { description: 'd', is_admin: false });
    expect(created.token).toMatch(/^svc_/);
    expect(created).toMatchObject({ name: 'lifecycle', is_admin: false });
    expect(typeof created.created_at).toBe('string');
    const got = await json(server, 'GET', `/api/v1/auth/tokens/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body.token).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(created.token);
    const list = await json(server, 'GET', '/api/v1/auth/tokens');
    expect(list.body.count).toBe(list.body.tokens.length);
    expect(JSON.stringify(list.body)).not.toContain(created.token);
  });

  test('verify answers nested token_info and permissions', async () => {
    const res = await json(server, 'GET', '/api/v1/auth/verify');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, token_info: { name: 'admin', is_admin: true }, permissions: [] });
    const anon = await fetch(server.url + '/api/v1/auth/verify');
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { valid: boolean }).valid).toBe(false);
  });

  test('patch updates metadata; duplicate names conflict; bad bodies are 400', async () => {
    const t = await createToken('patchme');
    const res = await json(server, 'PATCH', `/api/v1/auth/tokens/${t.id}`, { description: 'new', is_admin: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: 'new', is_admin: true });
    expect((await json(server, 'POST', '/api/v1/auth/tokens', { name: 'patchme' })).status).toBe(409);
    expect((await json(server, 'POST', '/api/v1/auth/tokens', {})).status).toBe(400);
    expect((await json(server, 'POST', '/api/v1/auth/tokens', { name: 'x', bogus: 1 })).status).toBe(400);
    expect((await json(server, 'PATCH', '/api/v1/auth/tokens/nope', { description: 'x' })).status).toBe(404);
  });

  test('rotate: same id, new secret; the old one fails on the very next request', async () => {
    const t = await createToken('rotateme');
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(200); // now cached
    const rotated = await json(server, 'POST', `/api/v1/auth/tokens/${t.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.id).toBe(t.id);
    expect(rotated.body.token).not.toBe(t.token);
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(401);
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, rotated.body.token)).status).toBe(200);
  });

  test('revoke invalidates at once, even when cached; the record stays', async () => {
    const t = await createToken('revokeme');
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(200);
    const revoked = await json(server, 'POST', `/api/v1/auth/tokens/${t.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.enabled).toBe(false);
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(401);
    expect((await json(server, 'GET', `/api/v1/auth/tokens/${t.id}`)).body.enabled).toBe(false);
  });

  test('delete removes for good, even when cached', async () => {
    const t = await createToken('deleteme');
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(200);
    expect((await json(server, 'DELETE', `/api/v1/auth/tokens/${t.id}`)).status).toBe(200);
    expect((await json(server, 'GET', '/api/v1/auth/verify', undefined, t.token)).status).toBe(401);
    expect((await json(server, 'GET', `/api/v1/auth/tokens/${t.id}`)).status).toBe(404);
    expect((await json(server, 'DELETE', `/api/v1/auth/tokens/${t.id}`)).status).toBe(404);
  });

  test('cache stats and invalidate', async () => {
    const stats = await json(server, 'GET', '/api/v1/auth/cache/stats');
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ max_size: 1000, ttl_seconds: 30 });
    expect(stats.body.size).toBeGreaterThan(0);
    const inv = await json(server, 'POST', '/api/v1/auth/cache/invalidate');
    expect(inv.status).toBe(200);
    expect(inv.body.entries_removed).toBeGreaterThan(0);
    // The invalidate request itself re-caches the admin token; nothing else is left.
    expect((await json(server, 'GET', '/api/v1/auth/cache/stats')).body.size).toBeLessThanOrEqual(1);
  });
});

describe('bootstrap token', () => {
  test('printed once on first start, not again on restart', async () => {
    const first = await startServer({ noBootstrapToken: true, keepDir: true });
    const match = /initial admin token.*\n(svc_\S+)/.exec(first.output());
    expect(match).not.toBeNull();
    const token = match![1]!;
    expect((await json(first, 'GET', '/api/v1/auth/tokens', undefined, token)).status).toBe(200);
    expect(await first.stop()).toBe(0);
    const second = await startServer({ noBootstrapToken: true, dir: first.dir });
    expect(second.output()).not.toContain('initial admin token (shown once');
    expect((await json(second, 'GET', '/api/v1/auth/tokens', undefined, token)).status).toBe(200);
    await second.cleanup();
  });

  test('SVC_AUTH_BOOTSTRAP_TOKEN fixes the value and is never printed', async () => {
    const s = await startServer({ noBootstrapToken: true, env: { SVC_AUTH_BOOTSTRAP_TOKEN: 'x'.repeat(40) } });
    expect(s.output()).not.toContain('x'.repeat(40));
    expect((await json(s, 'GET', '/api/v1/auth/tokens', undefined, 'x'.repeat(40))).status).toBe(200);
    await s.cleanup();
  });

  test('a bootstrap token shorter than 32 characters stops startup with exit 2', async () => {
    await expect(startServer({ noBootstrapToken: true, env: { SVC_AUTH_BOOTSTRAP_TOKEN: 'short' } })).rejects.toThrow(/at least 32 characters/);
  });

  test('auth.enabled = false opens every route', async () => {
    const s = await startServer({ env: { SVC_AUTH_ENABLED: 'false' } });
    expect((await fetch(s.url + '/api/v1/auth/tokens')).status).toBe(200);
    await s.cleanup();
  });
});

describe('svc token create (CLI)', () => {
  test('creates an admin token in the local metadata file that the server accepts', async () => {
    const s = await startServer({ keepDir: true });
    await s.stop();
    const proc = Bun.spawnSync([process.execPath, `${import.meta.dir}/../src/main.ts`, 'token', 'create', '--admin', '--name', 'rescue'], {
      cwd: s.dir,
      env: { ...process.env, SVC_NATIVE_CACHE_DIR: `${s.dir}/.native-cache` },
    });
    expect(proc.exitCode).toBe(0);
    const token = proc.stdout.toString().trim();
    expect(token).toMatch(/^svc_/);
    const again = await startServer({ dir: s.dir });
    const res = await json(again, 'GET', '/api/v1/auth/verify', undefined, token);
    expect(res.body.token_info).toMatchObject({ name: 'rescue', is_admin: true });
    await again.cleanup();
  });
});
