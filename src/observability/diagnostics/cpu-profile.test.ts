import type { SamplingProfile } from 'bun:jsc';
import { expect, test } from 'bun:test';
import { sampleCpu, toCpuProfile } from './cpu-profile.ts';

const frame = (name: string, line: number) => ({ sourceID: 2, name, location: '', sourceURL: '/app.ts', line, column: 1, category: 'LLInt', flags: 0 });

test('builds a call tree from innermost-first JSC stacks', () => {
  const p = {
    functions: '',
    bytecodes: '',
    stackTraces: {
      interval: 0.001,
      sources: [],
      traces: [
        { timestamp: 1.0, frames: [frame('leaf', 3), frame('main', 10)] },
        { timestamp: 1.002, frames: [frame('leaf', 3), frame('main', 10)] },
        { timestamp: 1.005, frames: [frame('other', 7), frame('main', 10)] },
      ],
    },
  } as unknown as SamplingProfile;
  const cpu = toCpuProfile(p);
  const byName = new Map(cpu.nodes.map((n) => [n.callFrame.functionName, n]));
  expect(cpu.nodes[0]!.children).toEqual([byName.get('main')!.id]);
  expect(byName.get('main')!.children).toEqual([byName.get('leaf')!.id, byName.get('other')!.id]);
  expect(byName.get('leaf')!.hitCount).toBe(2);
  expect(byName.get('leaf')!.callFrame.lineNumber).toBe(2);
  expect(cpu.samples).toEqual([byName.get('leaf')!.id, byName.get('leaf')!.id, byName.get('other')!.id]);
  expect(cpu.timeDeltas).toEqual([0, 2000, 3000]);
  expect(cpu.endTime - cpu.startTime).toBe(5000);
});

test('samples the running process for the given time', async () => {
  const busy = setInterval(() => {
    let x = 0;
    for (let i = 0; i < 2e5; i++) x += Math.sqrt(i);
    return x;
  }, 1);
  const p = await sampleCpu(0.3);
  clearInterval(busy);
  expect(p.stackTraces.traces.length).toBeGreaterThan(0);
  expect(toCpuProfile(p).samples.length).toBe(p.stackTraces.traces.length);
});
