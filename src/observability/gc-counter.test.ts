import { fullGC } from 'bun:jsc';
import { expect, test } from 'bun:test';
import { GcCounter } from './gc-counter.ts';
import { Counter } from './metrics.ts';

test('each forced collection is counted once it has been noticed', async () => {
  const counter = new Counter('gc_total', 'gc');
  const gc = new GcCounter(counter);
  gc.start();
  for (let i = 0; i < 3; i++) {
    fullGC();
    await Bun.sleep(5); // finalization callbacks run on a later turn of the event loop
  }
  gc.stop();
  expect(gc.figures().cycles).toBeGreaterThanOrEqual(3);
  expect(counter.total()).toBe(gc.figures().cycles);
  expect(gc.figures().lastAt).toBeGreaterThan(Date.now() - 10_000);
  const stopped = gc.figures().cycles;
  fullGC();
  await Bun.sleep(5);
  expect(gc.figures().cycles).toBeLessThanOrEqual(stopped + 1);
});
