import { expect, test } from 'bun:test';
import { GaugeSampler } from './gauge-sampler.ts';
import { Gauge } from './metrics.ts';

test('samples each source on add and on every tick; a failing source keeps the last good value', () => {
  const g = new Gauge('buffered', 'b');
  const bad = new Gauge('bad', 'b');
  let n = 5;
  let fail = false;
  const s = new GaugeSampler(1000);
  s.add(g, () => n);
  s.add(bad, () => {
    if (fail) throw new Error('boom');
    return 9;
  });
  expect(g.value()).toBe(5);
  n = 6;
  fail = true;
  s.sampleNow();
  expect(g.value()).toBe(6);
  expect(bad.value()).toBe(9);
});
