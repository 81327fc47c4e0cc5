import { describe, expect, test } from 'bun:test';
import { rankBm25, tokenize } from './bm25.ts';

describe('bm25', () => {
  test('tokens are lowercase runs of letters and digits', () => {
    expect(tokenize('API v2, api! Straße_42 café')).toEqual(['api', 'v2', 'api', 'straße', '42', 'café']);
  });

  test('ranks a small corpus in the expected order (scores worked out by hand)', () => {
    const docs = [
      'the database connection pool was exhausted under load', // both terms: 1.319
      'database database database migration failed on the users table', // tf 3, saturated: 0.792
      'user asked about the weather', // no term: left out
      'connection reset by peer while calling the payments api', // rarer term once: 0.773
      'database index rebuilt', // short doc, common term once: 0.699
    ];
    const ranked = rankBm25('database connection', docs);
    expect(ranked.map((r) => r.index)).toEqual([0, 1, 3, 4]);
    expect(ranked.map((r) => Math.round(r.score * 1000) / 1000)).toEqual([1.319, 0.792, 0.773, 0.699]);
  });

  test('equal scores keep input order (newest first); empty query ranks nothing', () => {
    expect(rankBm25('x', ['x', 'y', 'x']).map((r) => r.index)).toEqual([0, 2]);
    expect(rankBm25('  !! ', ['x'])).toEqual([]);
  });
});
