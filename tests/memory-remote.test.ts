/**
 * The memory service end to end against a separately started time-series server: a second server
 * process whose memory service uses SVC_MEMORY_SVC_URL and SVC_MEMORY_SVC_TOKEN (a non-admin service
 * token of the first server: only service tokens and admins reach its system database); the second server's own time-series side is unused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { agentsSuite } from './memory-suite-agents.ts';
import { authSuite } from './memory-suite-auth.ts';
import { memoriesSuite } from './memory-suite-memories.ts';
import { searchSuite } from './memory-suite-search.ts';
import { call, remoteTarget, uid, type MemoryTarget } from './memory-support.ts';

let target: MemoryTarget;
beforeAll(async () => void (target = await remoteTarget()), 60_000);
afterAll(async () => await target.stop());

authSuite(() => target);
memoriesSuite(() => target);
searchSuite(() => target);
agentsSuite(() => target);

test('a purge through the remote service token erases with delete.enabled off (the default)', async () => {
  const created = await call(target, 'POST', '/api/v1/memories', { agent_id: uid('remote-purge'), content: 'erase me remotely' });
  expect((await call(target, 'DELETE', `/api/v1/memories/${created.body.memory_id}?purge=true`)).status).toBe(204);
  expect((await call(target, 'GET', `/api/v1/memories/${created.body.memory_id}`)).status).toBe(404);
});
