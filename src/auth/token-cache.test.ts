import { expect, test } from 'bun:test';
import { TokenCache } from './token-cache.ts';

test('the least recently used entry is evicted, whether its last use was a set or a hit', () => {
  const cache = new TokenCache<number>(60_000, 2);
  cache.set('a', 1);
  cache.set('b', 2);
  expect(cache.get('a')).toBe(1); // a is now the newest
  expect(cache.get('a')).toBe(1); // a hit on the newest keeps it the newest
  cache.set('c', 3); // evicts b
  expect(cache.get('b')).toBeUndefined();
  expect(cache.get('a')).toBe(1);
  expect(cache.get('c')).toBe(3);
  cache.set('d', 4); // evicts a: c was used after it
  expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([undefined, 3, 4]);
  expect(cache.evictions).toBe(2);
});

test('a removed newest entry is no longer found, and the next one takes its place', () => {
  const cache = new TokenCache<number>(60_000, 2);
  cache.set('a', 1);
  cache.set('b', 2);
  expect(cache.deleteWhere((v) => v === 2)).toBe(1);
  expect(cache.get('b')).toBeUndefined();
  cache.set('c', 3);
  expect(cache.get('a')).toBe(1);
  cache.set('d', 4); // evicts c, used before a
  expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, undefined, 4]);
});

test('an expired entry is a miss', () => {
  const cache = new TokenCache<number>(1000, 2);
  cache.set('a', 1, 0);
  expect(cache.get('a', 999)).toBe(1);
  expect(cache.get('a', 1000)).toBeUndefined();
  expect([cache.hits, cache.misses]).toEqual([1, 1]);
});
