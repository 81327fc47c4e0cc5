/**
 * RBAC benchmark (`bun run bench:rbac`): what the authorizer adds to a request, for a token in 3
 * teams with 20 roles (each with 3 measurement permissions; the role that allows is the last one
 * looked at, the worst case).
 * 1. In process: the authorizer's work per request (build the request's access, check every table
 *    of a query or measurement of a write batch), with the compiled policy cached as between RBAC
 *    changes, and once per change (policy read from SQLite and compiled).
 * 2. End to end against a real server: median query and ingest request times, for a token in no team
 *    and for the narrowed token, alternating. The report is the ratio authorizer cost / request cost
 *    (issue 23's bound: at most 2%), plus the end-to-end ratio narrowed / plain (noise included).
 * Env: BENCH_ROWS (default 200000), BENCH_REPEATS (default 61 request pairs per case).
 */
import { createRbac, TokenService, TokenStore, type Principal } from '../src/auth/index.ts';
import { migrations, openCatalog } from '../src/catalog/index.ts';
import { assertAllowed } from '../src/lib/table-access.ts';
import { startServer } from '../tests/helpers/server.ts';
import { GRANTS, narrowedToken, plainToken, ROLES, roleSpec, TEAMS } from './rbac-setup.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 61);
const T0_NS = 1_700_000_000_000_000_000n;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Nanoseconds per call of `fn`, over about half a second. */
function nsPerCall(fn: () => void): number {
  for (let i = 0; i < 10_000; i++) fn();
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < 500) {
    for (let i = 0; i < 10_000; i++) fn();
    n += 10_000;
  }
  return ((performance.now() - started) * 1e6) / n;
}

function inProcess(): { queryNs: number; writeNs: number; compileNs: number } {
  const db = openCatalog(':memory:', migrations);
  const tokenStore = new TokenStore(db);
  const tokens = new TokenService(tokenStore, { cacheTtlSec: 30, maxCacheSize: 100 });
  const { authorizer, rbac } = createRbac(db, tokenStore, true, []);
  const { record } = tokens.create({ name: 'narrow', permissions: ['read', 'write'] });
  const org = rbac.createOrganization({ name: 'o', description: '' });
  const teams = Array.from({ length: TEAMS }, (_, t) => rbac.createTeam(org.id, { name: `t${t}`, description: '' }));
  for (const t of teams) rbac.addMember(t.id, record.id);
  for (let i = 0; i < ROLES; i++) {
    const spec = roleSpec(i);
    const role = rbac.createRole(teams[i % TEAMS]!.id, { name: spec.name, database_pattern: spec.database_pattern, permissions: spec.permissions });
    for (const g of spec.grants) rbac.createGrant(role.id, { measurement_pattern: g, permissions: spec.permissions });
  }
  const principal: Principal = { tokenId: record.id, name: record.name, isAdmin: false, permissions: record.permissions, isService: false };
  if (!authorizer.accessFor(principal).allows('read', 'bench', 'cpu')) throw new Error('benchmark policy does not allow bench.cpu');
  // A query naming the measurement twice (a self-join), a write batch of one measurement.
  const queryNs = nsPerCall(() => {
    const access = authorizer.accessFor(principal);
    if (!access.allows('read', 'bench', 'cpu') || !access.allows('read', 'bench', 'cpu')) throw new Error('denied');
  });
  const writeNs = nsPerCall(() => assertAllowed(authorizer.accessFor(principal), 'write', 'bench', ['cpu']));
  const compileNs = nsPerCall(() => {
    authorizer.invalidate();
    authorizer.accessFor(principal);
  });
  db.close();
  return { queryNs, writeNs, compileNs };
}

async function endToEnd(): Promise<{ cases: { name: string; plainMs: number; narrowMs: number }[] }> {
  const s = await startServer({ env: { SVC_MQTT_ENABLED: 'false', SVC_MEMORY_ENABLED: 'false' } });
  try {
    const lines = (n: number, offset: number) =>
      Array.from({ length: n }, (_, i) => `cpu,host=h${i % 100} usage=${(i % 97) + 0.5},load=${i % 7}i ${T0_NS + BigInt((offset + i) * 1_000_000)}`).join('\n');
    for (let at = 0; at < ROWS; at += 20_000) await s.fetch('/write?db=bench', { method: 'POST', body: lines(Math.min(20_000, ROWS - at), at) });
    await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    const plain = await plainToken(s, 'plain');
    const narrow = await narrowedToken(s, 'narrow');
    const query = (sql: string) => async (token: string) => {
      const res = await s.fetch('/api/v1/query', { method: 'POST', token, headers: { 'content-type': 'application/json', 'x-svc-database': 'bench' }, body: JSON.stringify({ sql }) });
      if (res.status !== 200) throw new Error(`query: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    let batch = 0;
    const ingest = async (token: string) => {
      // Times far from the query data, so the queries read the same rows throughout.
      const res = await s.fetch('/write?db=bench', { method: 'POST', token, body: lines(1000, 10_000_000 + 1000 * batch++) });
      if (res.status !== 204) throw new Error(`write: ${res.status} ${await res.text()}`);
    };
    const cases: [string, (token: string) => Promise<void>][] = [
      ['query: last 10 rows', query('SELECT * FROM cpu ORDER BY time DESC LIMIT 10')],
      ['query: group by host', query('SELECT host, avg(usage) AS u, max(load) AS l FROM cpu GROUP BY host ORDER BY host')],
      ['query: self-join count', query('SELECT count(*) FROM cpu a JOIN cpu b USING (time, host) WHERE a.time < TIMESTAMP \'2023-11-14 22:14:00\'')],
      ['ingest: 1000 lines', ingest],
    ];
    const out: { name: string; plainMs: number; narrowMs: number }[] = [];
    for (const [name, run] of cases) {
      for (let i = 0; i < 5; i++) (await run(plain), await run(narrow));
      const p: number[] = [];
      const n: number[] = [];
      // Alternating, and each side first in every other pair, so drift of the shared machine and
      // the cost of going first fall on both sides alike.
      const timed = async (token: string, into: number[]) => {
        const t = performance.now();
        await run(token);
        into.push(performance.now() - t);
      };
      for (let i = 0; i < REPEATS; i++) {
        if (i % 2 === 0) (await timed(plain, p), await timed(narrow, n));
        else (await timed(narrow, n), await timed(plain, p));
      }
      out.push({ name, plainMs: median(p), narrowMs: median(n) });
    }
    return { cases: out };
  } finally {
    await s.cleanup();
  }
}

const micro = inProcess();
console.log(`authorizer, token in ${TEAMS} teams with ${ROLES} roles x ${GRANTS} measurement permissions (allowing role looked at last):`);
console.log(`  query (2 table references): ${micro.queryNs.toFixed(0)} ns/request`);
console.log(`  write batch (1 measurement): ${micro.writeNs.toFixed(0)} ns/request`);
console.log(`  after an RBAC change (read + compile, once per token): ${(micro.compileNs / 1000).toFixed(1)} µs`);
const e2e = await endToEnd();
console.log(`\nend to end (${ROWS} rows, medians of ${REPEATS} alternating pairs):`);
console.log('case                          plain ms  narrowed ms  narrowed/plain  authorizer/request');
for (const c of e2e.cases) {
  const cost = c.name.startsWith('ingest') ? micro.writeNs : micro.queryNs;
  const share = cost / 1e6 / c.plainMs;
  console.log(`${c.name.padEnd(30)}${c.plainMs.toFixed(3).padStart(8)}  ${c.narrowMs.toFixed(3).padStart(11)}  ${(c.narrowMs / c.plainMs).toFixed(3).padStart(14)}  ${(share * 100).toFixed(3).padStart(17)}%`);
}
