/** Suite: POST /api/v1/search, every field, and BM25 ranking of a small corpus. */
import { beforeAll, describe, expect, test } from 'bun:test';
import { listFixture } from './memory-suite-memories.ts';
import { call, uid, type MemoryTarget } from './memory-support.ts';

const short = (body: { results: { memory_id: string }[] }) => body.results.map((m) => m.memory_id.replace(/^.*-(m\d)$/, '$1'));

/** The BM25 corpus and its expected order for "database connection" (worked out in bm25.test.ts). */
export const BM25_CORPUS = [
  'the database connection pool was exhausted under load',
  'database database database migration failed on the users table',
  'user asked about the weather',
  'connection reset by peer while calling the payments api',
  'database index rebuilt',
];

/** Registers the search suite against the target returned by `t`. */
export function searchSuite(t: () => MemoryTarget) {
  describe('search', () => {
    const agent = uid('searcher');
    const other = uid('other');
    const search = (body: Record<string, unknown>) => call(t(), 'POST', '/api/v1/search', { agent_id: agent, ...body });
    beforeAll(async () => void (await t().seed(listFixture(agent, other))));

    test('response shape: {results, count, query_time_ms}; default order desc', async () => {
      const r = await search({});
      expect(r.status).toBe(200);
      expect(short(r.body)).toEqual(['m5', 'm4', 'm3', 'm2', 'm1']);
      expect(r.body.count).toBe(5);
      expect(r.body.query_time_ms).toBeNumber();
      expect(r.body.results[0]).toMatchObject({ agent_id: agent, content: 'user likes brevity', memory_type: 'session', importance: 0.7 });
    });

    test('exact filters, OR lists, AND tags', async () => {
      expect(short((await search({ session_id: 's2' })).body)).toEqual(['m4', 'm3']);
      expect(short((await search({ memory_types: ['decision', 'entity'] })).body)).toEqual(['m3', 'm2']);
      expect(short((await search({ event_types: ['plan', 'error'] })).body)).toEqual(['m4', 'm2']);
      expect(short((await search({ tags: ['api', 'db'] })).body)).toEqual(['m2']);
      expect(short((await search({ tags: ['api'] })).body)).toEqual(['m2', 'm1']);
    });

    test('content_contains is a case-insensitive substring', async () => {
      expect(short((await search({ content_contains: 'ALPHA' })).body)).toEqual(['m1']);
      expect(short((await search({ content_contains: 'api v2' })).body)).toEqual(['m3']);
      expect(short((await search({ content_contains: "o'brien" })).body)).toEqual([]);
    });

    test('importance bounds, time range, order, limit, offset', async () => {
      expect(short((await search({ min_importance: 0.5 })).body)).toEqual(['m5', 'm3', 'm2']);
      expect(short((await search({ max_importance: 0.2 })).body)).toEqual(['m4', 'm1']);
      expect(short((await search({ min_importance: 0.2, max_importance: 0.7 })).body)).toEqual(['m5', 'm3', 'm1']);
      expect(short((await search({ since: '1d' })).body)).toEqual(['m5', 'm4']);
      expect(short((await search({ until: new Date(Date.now() - 40 * 3_600_000).toISOString() })).body)).toEqual(['m2', 'm1']);
      expect(short((await search({ order: 'asc', limit: 2 })).body)).toEqual(['m1', 'm2']);
      expect(short((await search({ order: 'asc', limit: 2, offset: 3 })).body)).toEqual(['m4', 'm5']);
    });

    const bad: [Record<string, unknown>, string][] = [
      [{ min_importance: 2 }, 'min_importance'],
      [{ min_importance: 0.8, max_importance: 0.2 }, 'min_importance'],
      [{ memory_types: ['dreams'] }, 'memory_types[0]'],
      [{ memory_types: 'decision' }, 'memory_types'],
      [{ tags: ['a,b'] }, 'tags[0]'],
      [{ limit: 1001 }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ order: 'sideways' }, 'order'],
      [{ since: 'last tuesday' }, 'since'],
      [{ agent_id: "a' OR 1=1 --" }, 'agent_id'],
    ];
    for (const [body, field] of bad)
      test(`400 invalid_request: ${JSON.stringify(body)}`, async () => {
        const r = await search(body);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe('invalid_request');
        expect(r.body.message).toContain(field);
      });

    test('full text: query ranks by relevance; non-matching memories are left out', async () => {
      const bm = uid('bm25');
      const created = await call(t(), 'POST', '/api/v1/memories', { memories: BM25_CORPUS.map((content) => ({ agent_id: bm, content })) });
      expect(created.status).toBe(201);
      const r = await call(t(), 'POST', '/api/v1/search', { agent_id: bm, query: 'Database CONNECTION' });
      expect(r.status).toBe(200);
      const order = r.body.results.map((m: { content: string }) => BM25_CORPUS.indexOf(m.content));
      // BM25's document frequencies come from every indexed memory, so only the clear cases are fixed here.
      expect(order[0]).toBe(0);
      expect([...order].sort()).toEqual([0, 1, 3, 4]);
      const scores = r.body.results.map((m: { score: number }) => m.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      const page = await call(t(), 'POST', '/api/v1/search', { agent_id: bm, query: 'database connection', limit: 2, offset: 1 });
      expect(page.body.results.map((m: { content: string }) => BM25_CORPUS.indexOf(m.content))).toEqual(order.slice(1, 3));
      const stemmed = await call(t(), 'POST', '/api/v1/search', { agent_id: bm, query: 'rebuilding indexes' });
      expect(stemmed.body.results.map((m: { content: string }) => m.content)).toEqual(['database index rebuilt']);
      const filtered = await call(t(), 'POST', '/api/v1/search', { agent_id: bm, query: 'database', content_contains: 'index' });
      expect(filtered.body.results.map((m: { content: string }) => m.content)).toEqual(['database index rebuilt']);
    });
  });
}
