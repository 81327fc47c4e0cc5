import { describe, expect, test } from 'bun:test';
import { decideTakeover, parsePrimaryRecord, type TakeoverInput } from './takeover-policy.ts';

const base: TakeoverInput = { self: 'b', record: { node_id: 'a', elected_at: 1_000 }, recordedIsCandidate: false, failoverEnabled: true, cooldownMs: 60_000, now: 2_000 };

describe('takeover policy', () => {
  test('no record (fresh cluster, graceful resign, operator promotion) or our own record: take over', () => {
    expect(decideTakeover({ ...base, record: null, failoverEnabled: false })).toEqual({ kind: 'take' });
    expect(decideTakeover({ ...base, record: { node_id: 'b', elected_at: 1_000 }, failoverEnabled: false })).toEqual({ kind: 'take' });
  });

  test('a holder that lost its lease and is gone is replaced at once, inside the cooldown too', () => {
    expect(decideTakeover(base)).toEqual({ kind: 'take' });
  });

  test('a holder back as a candidate within its cooldown keeps the role until the cooldown ends', () => {
    expect(decideTakeover({ ...base, recordedIsCandidate: true })).toEqual({ kind: 'yield', holder: 'a', untilMs: 61_000 });
    expect(decideTakeover({ ...base, recordedIsCandidate: true, now: 61_000 })).toEqual({ kind: 'take' });
  });

  test('failover disabled: stand aside for a holder that did not resign, whether it is back or not', () => {
    expect(decideTakeover({ ...base, failoverEnabled: false })).toEqual({ kind: 'stand-aside', holder: 'a' });
    expect(decideTakeover({ ...base, failoverEnabled: false, recordedIsCandidate: true, now: 1e9 })).toEqual({ kind: 'stand-aside', holder: 'a' });
  });

  test('a stored value that is not a record counts as none', () => {
    expect(parsePrimaryRecord(undefined)).toBeNull();
    expect(parsePrimaryRecord('{oops')).toBeNull();
    expect(parsePrimaryRecord('{"node_id":1}')).toBeNull();
    expect(parsePrimaryRecord('{"node_id":"a","elected_at":5}')).toEqual({ node_id: 'a', elected_at: 5 });
  });
});
