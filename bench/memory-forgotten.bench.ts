/**
 * Reads with many forgotten memories (`bun run bench:forgotten`, issue 27): forgets BENCH_FORGOTTEN
 * memories (default 60,000) of one agent, then times list, stats and create through the memory API
 * (each read leaves every forgotten id out), and, as the same-run reference, the same read sent to
 * the time-series query API with the ids as a literal `NOT IN ('id1', ...)` list (the old form)
 * next to the form memory-sql.ts sends now (one JSON literal, unnested in a subquery).
 * Prints median milliseconds of BENCH_ITERATIONS (default 3) runs and the reference ratio.
 */
import { startServer } from '../tests/helpers/server.ts';
import { call, MEMORY_ADMIN_KEY, seedMemories, type SeedRow } from '../tests/memory-support.ts';
import { idListSql } from '../src/memory/memory-sql.ts';
import { sqlStringList } from '../src/memory/sql.ts';

const N = Number(process.env.BENCH_FORGOTTEN ?? 60_000);
const ITER = Number(process.env.BENCH_ITERATIONS ?? 3);
const BATCH = 20_000;

const s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY } });
const seed = async (rows: SeedRow[]) => {
  const res = await seedMemories(s, rows);
  if (res.status !== 204) throw new Error(`seed failed: ${res.status} ${await res.text()}`);
};
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(label: string, fn: () => Promise<void>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < ITER; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  const m = median(ms);
  console.log(`${label.padEnd(40)} ${m.toFixed(0).padStart(7)} ms`);
  return m;
}

try {
  const now = Date.now();
  const ids = Array.from({ length: N }, (_, k) => `mem_gone${k}`);
  for (let start = 0; start < N; start += BATCH)
    await seed(ids.slice(start, start + BATCH).map((memory_id, k) => ({ memory_id, agent_id: 'gone', timeMs: now - 3_600_000 + start + k, content: `note ${start + k}` })));
  await seed(Array.from({ length: 1000 }, (_, k) => ({ memory_id: `mem_kept${k}`, agent_id: 'kept', timeMs: now - 1_800_000 + k, content: `kept ${k}` })));
  const mem = { name: 'bench', url: s.memoryUrl, seed: async () => {}, stop: async () => {} };
  const t0 = performance.now();
  const forgot = await call(mem, 'POST', '/api/v1/memories/forget', { agent_id: 'gone' });
  if (forgot.body.forgotten !== N) throw new Error(`forgot ${JSON.stringify(forgot.body)}`);
  console.log(`forgotten memories: ${N} (bulk forget ${(performance.now() - t0).toFixed(0)} ms)`);
  const ok = (expected: number) => async (r: Promise<{ status: number }>) => {
    const got = (await r).status;
    if (got !== expected) throw new Error(`status ${got}`);
  };
  await time('GET /memories (whole org)', () => ok(200)(call(mem, 'GET', '/api/v1/memories?limit=5')));
  await time('GET /memories?agent_id=gone', () => ok(200)(call(mem, 'GET', '/api/v1/memories?agent_id=gone&limit=5')));
  await time('GET /agents/gone/stats', () => ok(404)(call(mem, 'GET', '/api/v1/agents/gone/stats')));
  await time('POST /memories (dedup check)', () => ok(201)(call(mem, 'POST', '/api/v1/memories', { agent_id: 'kept', content: `new ${Math.random()}` })));
  const query = (sql: string) => async () => {
    const res = await s.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'agent_memory' }, body: JSON.stringify({ sql, format: 'json' }) });
    if (res.status !== 200) throw new Error(`query ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  };
  const base = `SELECT memory_id FROM memories WHERE org_id = 'default' AND memory_id NOT IN`;
  const old = await time('query: literal NOT IN list (reference)', query(`${base} (${sqlStringList(ids)}) ORDER BY time DESC LIMIT 5`));
  const now2 = await time('query: JSON literal subquery (now)', query(`${base} (${idListSql(ids)}) ORDER BY time DESC LIMIT 5`));
  console.log(`now / reference: ${(now2 / old).toFixed(4)} (${(old / now2).toFixed(0)}x faster)`);
} finally {
  await s.cleanup();
}
