/**
 * The memory service end to end against a separately started time-series server: a second server
 * process whose memory service uses SVC_MEMORY_SVC_URL and SVC_MEMORY_SVC_TOKEN (an admin token of
 * the first server: only admins reach its system database from outside); the second server's own time-series side is unused.
 */
import { afterAll, beforeAll } from 'bun:test';
import { agentsSuite } from './memory-suite-agents.ts';
import { authSuite } from './memory-suite-auth.ts';
import { memoriesSuite } from './memory-suite-memories.ts';
import { searchSuite } from './memory-suite-search.ts';
import { remoteTarget, type MemoryTarget } from './memory-support.ts';

let target: MemoryTarget;
beforeAll(async () => void (target = await remoteTarget()), 60_000);
afterAll(async () => await target.stop());

authSuite(() => target);
memoriesSuite(() => target);
searchSuite(() => target);
agentsSuite(() => target);
