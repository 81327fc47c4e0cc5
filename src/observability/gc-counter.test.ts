import { fullGC } from 'bun:jsc';
import { expect, test } from 'bun:test';
import { GcCounter } from './gc-counter.ts';
import { Counter } from './metrics.ts';

/**
 * Collects until the counter has noticed one more cycle. Finalization callbacks run on a later turn of
 * the event loop, after a collection that JSC may schedule lazily, so this waits for the condition
 * (bounded), never for a fixed time.
 */
async function collectUntilCounted(gc: GcCounter): Promise<void> {
  const before = gc.figures().cycles;
  for (let turn = 0; turn < 1000 && gc.figures().cycles === before; turn++) {
    fullGC();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  expect(gc.figures().cycles).toBeGreaterThan(before);
}

test('each forced collection is counted once it has been noticed, at the injected time', async () => {
  const counter = new Counter('gc_total', 'gc');
  let clock = 1_000;
  const gc = new GcCounter(counter, () => clock);
  gc.start();
  for (let i = 0; i < 3; i++) {
    clock += 10;
    await collectUntilCounted(gc);
  }
  expect(gc.figures().cycles).toBeGreaterThanOrEqual(3);
  expect(counter.total()).toBe(gc.figures().cycles);
  expect(gc.figures().lastAt).toBe(1_030);
  gc.stop();
  const stopped = gc.figures().cycles;
  // After stop the callback returns before counting, whenever it runs.
  for (let turn = 0; turn < 20; turn++) {
    fullGC();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  expect(gc.figures().cycles).toBe(stopped);
});
