import { describe, expect, test } from 'bun:test';
import { ftsQueries, rank } from './search-ranking.ts';

const DAY_US = 86_400_000_000;

describe('search ranking', () => {
  test('query text becomes quoted OR terms; CJK runs of 3+ characters go to the trigram index', () => {
    expect(ftsQueries('Database CONNECTION, database!')).toEqual({ words: '"database" OR "connection"', cjk: null });
    expect(ftsQueries('"; DROP TABLE x --')).toEqual({ words: '"drop" OR "table" OR "x"', cjk: null });
    expect(ftsQueries('数据库系统 v2')).toEqual({ words: '"v2"', cjk: '"数据库系统"' });
    expect(ftsQueries('数据 ok')).toEqual({ words: '"ok"', cjk: null });
    expect(ftsQueries('  ,;  ')).toEqual({ words: null, cjk: null });
  });

  test('score = weighted text, recency and importance; explanation carries the parts', () => {
    const now = 100 * DAY_US;
    const r = rank([[
      { key: 1, bm25: 4, timeUs: now - 30 * DAY_US, importance: 0 },
      { key: 2, bm25: 2, timeUs: now, importance: 1 },
    ]], now, 30 * DAY_US);
    expect(r.map((x) => x.key)).toEqual([1, 2]);
    expect(r[0]!.explanation).toEqual({ bm25: 4, text: 1, recency: 0.5, importance: 0 });
    // The documented weights (0.6 text, 0.25 recency, 0.15 importance), written out, not imported.
    expect(r.map((x) => x.score)).toEqual([0.725, 0.7]);
    // Each part outweighs another somewhere in this fixture: any other weights reorder it.
    const fixture = rank([[
      { key: 1, bm25: 8, timeUs: now - 3000 * DAY_US, importance: 0 }, // best text, ancient, unimportant: 0.6
      { key: 2, bm25: 0, timeUs: now, importance: 1 }, // no text, fresh, important: 0.4
      { key: 3, bm25: 4, timeUs: now, importance: 0 }, // half the text, fresh: 0.55
      { key: 4, bm25: 4, timeUs: now - 30 * DAY_US, importance: 1 }, // half the text, a half-life old, important: 0.575
    ]], now, 30 * DAY_US);
    expect(fixture.map((x) => [x.key, x.score])).toEqual([[1, 0.6], [4, 0.575], [3, 0.55], [2, 0.4]]);
  });

  test('a key in both lists keeps its better text part; ties go to the newer memory', () => {
    const r = rank([[{ key: 1, bm25: 1, timeUs: 5, importance: 0 }, { key: 2, bm25: 2, timeUs: 5, importance: 0 }], [{ key: 1, bm25: 9, timeUs: 5, importance: 0 }]], 5, DAY_US);
    expect(r.find((x) => x.key === 1)!.explanation.text).toBe(1);
    const tie = rank([[{ key: 1, bm25: 1, timeUs: 4, importance: 0 }, { key: 2, bm25: 1, timeUs: 6, importance: 0 }]], 6, 1e30);
    expect(tie[0]!.score).toBe(tie[1]!.score);
    expect(tie.map((x) => x.key)).toEqual([2, 1]);
  });
});
