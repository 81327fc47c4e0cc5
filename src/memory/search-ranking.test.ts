import { describe, expect, test } from 'bun:test';
import { ftsQueries, rank, WEIGHTS } from './search-ranking.ts';

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
    expect(r[0]!.score).toBeCloseTo(WEIGHTS.text + WEIGHTS.recency * 0.5, 6);
    expect(r[1]!.score).toBeCloseTo(WEIGHTS.text * 0.5 + WEIGHTS.recency + WEIGHTS.importance, 6);
  });

  test('a key in both lists keeps its better text part; ties go to the newer memory', () => {
    const r = rank([[{ key: 1, bm25: 1, timeUs: 5, importance: 0 }, { key: 2, bm25: 2, timeUs: 5, importance: 0 }], [{ key: 1, bm25: 9, timeUs: 5, importance: 0 }]], 5, DAY_US);
    expect(r.find((x) => x.key === 1)!.explanation.text).toBe(1);
    const tie = rank([[{ key: 1, bm25: 1, timeUs: 4, importance: 0 }, { key: 2, bm25: 1, timeUs: 6, importance: 0 }]], 6, 1e30);
    expect(tie[0]!.score).toBe(tie[1]!.score);
    expect(tie.map((x) => x.key)).toEqual([2, 1]);
  });
});
