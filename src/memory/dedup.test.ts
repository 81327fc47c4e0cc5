import { describe, expect, test } from 'bun:test';
import { deriveDedupKey, RecentKeys } from './dedup.ts';
import { KeyedLock } from './keyed-lock.ts';

describe('dedup helpers', () => {
  test('derived keys depend on agent, event type and content', () => {
    const k = deriveDedupKey('a', 'general', 'x');
    expect(k).toBe(deriveDedupKey('a', 'general', 'x'));
    expect(k).not.toBe(deriveDedupKey('b', 'general', 'x'));
    expect(k).not.toBe(deriveDedupKey('a', 'error', 'x'));
    expect(deriveDedupKey('a\u0000b', 'c', 'd')).not.toBe(deriveDedupKey('a', 'b\u0000c', 'd'));
  });

  test('recent keys expire after the window, are bounded, and can be forgotten', () => {
    const r = new RecentKeys(1000, 2);
    r.set('o', 'k', { memoryId: 'm1', timeUs: 5_000_000 });
    expect(r.get('o', 'k', 5_500_000)?.memoryId).toBe('m1');
    expect(r.get('other', 'k', 5_500_000)).toBeNull();
    expect(r.get('o', 'k', 6_100_000)).toBeNull();
    r.set('o', 'a', { memoryId: 'a', timeUs: 1 });
    r.set('o', 'b', { memoryId: 'b', timeUs: 1 });
    r.set('o', 'c', { memoryId: 'c', timeUs: 1 });
    expect(r.size).toBe(2);
    r.forgetMemory('o', 'c', 'other');
    expect(r.get('o', 'c', 1)).not.toBeNull();
    r.forgetMemory('o', 'c', 'c');
    expect(r.get('o', 'c', 1)).toBeNull();
  });

  test('keyed lock serializes holders of a key and drains', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const job = (name: string, keys: string[]) =>
      lock.withKeys(keys, async () => {
        log.push(`${name}+`);
        await Bun.sleep(5);
        log.push(`${name}-`);
      });
    await Promise.all([job('a', ['k', 'j']), job('b', ['j', 'k']), job('c', ['z'])]);
    expect(log.indexOf('a-')).toBeLessThan(log.indexOf('b+'));
    expect(log.indexOf('c+')).toBeLessThan(log.indexOf('a-'));
    expect(lock.pending).toBe(0);
    await expect(lock.withKeys(['k'], async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(lock.pending).toBe(0);
  });
});
