import { expect, test } from 'bun:test';
import { WholeBodies } from './whole-body.ts';

const bytes = (n: number, v: number) => new Uint8Array(n).fill(v);

test('a body keeps copies of its parts, in order, and its Blob is exactly them', async () => {
  const bodies = new WholeBodies(1 << 20);
  const body = bodies.open()!;
  const part = bytes(100_000, 1);
  expect(body.add([part, bytes(3, 2)])).toBe(true);
  part.fill(9); // the caller reuses its memory at once
  expect(body.add([bytes(70_000, 3)])).toBe(true);
  const out = new Uint8Array(await body.blob().arrayBuffer());
  expect(out.byteLength).toBe(170_003);
  expect([out[0], out[99_999], out[100_000], out[100_002], out[100_003], out[170_002]]).toEqual([1, 1, 2, 2, 3, 3]);
  expect(bodies.budget.inUse()).toBe(0);
});

test('bodies built at once share the budget; a part past it is refused and nothing of it is taken', () => {
  const bodies = new WholeBodies(1000);
  const a = bodies.open()!;
  const b = bodies.open()!;
  expect(a.add([bytes(600, 1)])).toBe(true);
  expect(b.add([bytes(300, 1), bytes(200, 1)])).toBe(false);
  expect(b.add([bytes(400, 1)])).toBe(true);
  expect(bodies.budget.inUse()).toBe(1000);
  const { bytes: sent, sent: done } = a.handOver();
  expect(sent.byteLength).toBe(600);
  expect(bodies.budget.inUse()).toBe(400);
  done();
  b.close();
  b.close();
  expect(bodies.budget.inUse()).toBe(0);
});

test('a buffer given back is reused by the next body; a zero budget builds no body', () => {
  const bodies = new WholeBodies(8 << 20);
  const first = bodies.open()!;
  first.add([bytes(3 << 20, 1)]);
  const { bytes: sent, sent: done } = first.handOver();
  done();
  const next = bodies.open()!;
  next.add([bytes(10, 2)]);
  const { bytes: again } = next.handOver();
  expect(again.buffer).toBe(sent.buffer);
  expect(new WholeBodies(0).open()).toBeNull();
});

test('kept buffers are let go once no body was built for the idle time', async () => {
  const bodies = new WholeBodies(8 << 20, 20);
  const first = bodies.open()!;
  first.add([bytes(1 << 20, 1)]);
  const { bytes: sent, sent: done } = first.handOver();
  done();
  await Bun.sleep(60);
  const next = bodies.open()!;
  next.add([bytes(10, 2)]);
  expect(next.handOver().bytes.buffer).not.toBe(sent.buffer);
});
