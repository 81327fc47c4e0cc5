/**
 * The full-text match reads the narrow memory_index_rank index when the filter allows it, and the
 * wide rows otherwise: both ways must give the same matches, scores and order.
 */
import { expect, test } from 'bun:test';
import type { StoredMemory } from '../memory-record.ts';
import { openMemoryDb } from './memory-db.ts';
import { MemoryIndexStore } from './memory-index-store.ts';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];

function memory(i: number): StoredMemory {
  const words = Array.from({ length: 3 + (i % 5) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]!);
  return {
    memory_id: `mem_${i}`, org_id: i % 10 === 0 ? 'other' : 'default', agent_id: `agent-${i % 3}`, session_id: null, memory_type: 'episodic', event_type: 'general',
    content: words.join(' '), metadata: { project: 'apollo' }, tags: [], importance: (i % 10) / 10, dedup_key: `k${i}`, parent_id: null, version: 1,
    timeUs: 1_700_000_000_000_000 + i * 1_000_000, updatedUs: 1_700_000_000_000_000, expiresUs: i % 17 === 0 ? 1 : 0,
  };
}

test('matches through the narrow index equal matches through the wide rows', () => {
  const store = new MemoryIndexStore(openMemoryDb(':memory:'));
  store.upsert(Array.from({ length: 300 }, (_, i) => memory(i)));
  const narrow = store.match({ orgId: 'default', agentId: 'agent-1', aliveAtUs: 10 }, '"beta" OR "epsilon"', false, 50);
  // Every memory has this metadata: the same rows pass, but the filter now reads a column the narrow index lacks.
  const wide = store.match({ orgId: 'default', agentId: 'agent-1', aliveAtUs: 10, metadata: { project: 'apollo' } }, '"beta" OR "epsilon"', false, 50);
  expect(narrow.length).toBe(50);
  expect(wide).toEqual(narrow);
  // Best first, as higher-is-better BM25; no other organization, no expired memory.
  for (let k = 1; k < narrow.length; k++) expect(narrow[k - 1]!.bm25).toBeGreaterThanOrEqual(narrow[k]!.bm25);
  expect(narrow.every((h) => h.bm25 > 0)).toBe(true);
  const ids = new Set(store.rows(narrow.map((h) => h.rowid)).map((r) => `${r.org_id}:${r.expires_us}`));
  expect([...ids]).toEqual(['default:0']);
});

// An organization-wide filter first ranks a window of the best matches without the join (matchWindow);
// the same filter plus a condition every memory passes (importance >= 0) takes the joined query.
// Both must give the same matches in the same order, whatever the ties at the window's edge.
function bothWays(store: MemoryIndexStore, orgId: string, query: string, limit: number) {
  const windowed = store.match({ orgId, aliveAtUs: 10 }, query, false, limit);
  const joined = store.match({ orgId, aliveAtUs: 10, minImportance: 0 }, query, false, limit);
  return { windowed, joined };
}

test('an organization-wide match gives the same best matches as the joined query', () => {
  const store = new MemoryIndexStore(openMemoryDb(':memory:'));
  // 12,000 memories: over 4,000 matches, so the window (4 x 1000) does not hold them all.
  store.upsert(Array.from({ length: 12_000 }, (_, i) => memory(i)));
  for (const limit of [1000, 10]) {
    const { windowed, joined } = bothWays(store, 'default', '"beta" OR "epsilon"', limit);
    expect(windowed.length).toBe(limit);
    expect(windowed).toEqual(joined);
  }
  // A small organization: most of the window fails the filter; still the same answer.
  const other = bothWays(store, 'other', '"beta" OR "epsilon"', 1000);
  expect(other.windowed.length).toBeGreaterThan(100);
  expect(other.windowed).toEqual(other.joined);
});

test('a tie across the window edge is broken by time, as in the joined query', () => {
  const store = new MemoryIndexStore(openMemoryDb(':memory:'));
  // 9,000 memories with the same content: one BM25 score; only time orders them.
  store.upsert(Array.from({ length: 9000 }, (_, i) => ({ ...memory(i), org_id: 'default', expiresUs: 0, content: 'alpha beta gamma' })));
  const { windowed, joined } = bothWays(store, 'default', '"beta"', 1000);
  expect(windowed).toEqual(joined);
  expect(windowed.map((h) => h.time_us)).toEqual(Array.from({ length: 1000 }, (_, k) => 1_700_000_000_000_000 + (8999 - k) * 1_000_000));
});

test('with fewer matches than the window, every match is ranked', () => {
  const store = new MemoryIndexStore(openMemoryDb(':memory:'));
  store.upsert(Array.from({ length: 300 }, (_, i) => memory(i)));
  const { windowed, joined } = bothWays(store, 'other', '"beta" OR "epsilon"', 1000);
  expect(windowed.length).toBeGreaterThan(0);
  expect(windowed).toEqual(joined);
});
