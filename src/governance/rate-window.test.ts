/**
 * The rate windows through the real governor, policy book and SQLite counters, with an injected
 * clock instead of waiting a minute or an hour.
 */
import { expect, test } from 'bun:test';
import { migrations, openCatalog } from '../catalog/index.ts';
import { AppError } from '../lib/errors.ts';
import type { QueryOrigin } from '../query/index.ts';
import { createGovernance } from './governance-service.ts';

const origin: QueryOrigin = { source: 'query', format: 'json', tokenId: 't1', tokenName: 'one', isAdmin: false, clientIp: null };

function setup(start: number) {
  const clock = { now: start };
  const catalog = openCatalog(':memory:', migrations);
  const g = createGovernance({ catalog, queryManagement: true, governance: true, tokenOf: (id) => (id === 't1' ? { isAdmin: false } : null), now: () => clock.now });
  const run = () => g.gate!.admit({ sql: 'SELECT 1', database: null, origin }).finish({ rowCount: 1, rowsCapped: false, error: null, stop: null });
  const refusal = () => {
    try {
      run();
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return { status: (err as AppError).status, retry: Number((err as AppError).headers?.['Retry-After']), message: (err as AppError).message };
    }
  };
  return { clock, g, run, refusal, catalog };
}

test('the minute window slides: a query is refused until the oldest counted second leaves it', () => {
  const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
  const { clock, g, run, refusal } = setup(t0);
  g.policies!.create({ token_id: 't1', rate_limit_per_minute: 3, rate_limit_per_hour: null, max_queries_per_day: null, max_rows_per_query: null, max_scan_duration_seconds: null, max_concurrent_queries: null });
  run();
  clock.now = t0 + 20_000;
  run();
  run();
  clock.now = t0 + 30_000;
  expect(refusal()).toEqual({ status: 429, retry: 30, message: "governance limit exceeded: rate_limit_per_minute (3) for token 't1'" });
  // 59.999 s after the first query it still counts; at 60 s it has left the window.
  clock.now = t0 + 59_999;
  expect(refusal()?.retry).toBe(1);
  clock.now = t0 + 60_000;
  expect(refusal()).toBeNull();
  expect(refusal()?.retry).toBe(20);
  expect(g.report('t1')).toMatchObject({ queries_last_minute: 3, queries_last_hour: 4, queries_today: 4, rejected_today: 3 });
});

test('the hour window counts by minute and names its limit; the daily limit resets at UTC midnight', () => {
  const t0 = Date.UTC(2026, 0, 1, 22, 0, 0);
  const { clock, g, run, refusal } = setup(t0);
  const p = g.policies!.create({ token_id: 't1', rate_limit_per_minute: null, rate_limit_per_hour: 2, max_queries_per_day: null, max_rows_per_query: null, max_scan_duration_seconds: null, max_concurrent_queries: null });
  run();
  clock.now = t0 + 10 * 60_000;
  run();
  const r = refusal()!;
  expect(r.message).toContain('rate_limit_per_hour (2)');
  expect(r.retry).toBe(50 * 60);
  clock.now = t0 + 60 * 60_000;
  expect(refusal()).toBeNull();
  g.policies!.update(p.id, { rate_limit_per_hour: null, max_queries_per_day: 3 });
  expect(refusal()?.message).toContain('max_queries_per_day (3)');
  // A new UTC day: the daily count starts again (and the old day's count was kept).
  clock.now = Date.UTC(2026, 0, 2, 0, 0, 1);
  expect(refusal()).toBeNull();
  expect(g.report('t1').queries_today).toBe(1);
});

test('daily counters are written to the store and read back by a new process', () => {
  const t0 = Date.UTC(2026, 0, 1, 8, 0, 0);
  const { g, run, catalog } = setup(t0);
  run();
  run();
  g.stop();
  const again = createGovernance({ catalog, queryManagement: false, governance: true, tokenOf: () => ({ isAdmin: false }), now: () => t0 + 1000 });
  expect(again.report('t1')).toMatchObject({ queries_today: 2, rows_returned_today: 2, queries_last_minute: 0 });
});
