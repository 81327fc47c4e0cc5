import { profile, type SamplingProfile } from 'bun:jsc';

/** Chrome DevTools' `.cpuprofile` format, which DevTools, VS Code and speedscope open. */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; hitCount: number; children: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** JSC marks unknown lines and columns with this value. */
const UNKNOWN = 4294967295;

/**
 * Samples the whole process's JavaScript stacks for `seconds` with JavaScriptCore's sampling profiler
 * (profiling a sleep: the profiler records whatever runs meanwhile). Only time spent running JavaScript
 * produces samples; idle time does not.
 */
export async function sampleCpu(seconds: number, intervalMicros = 1000): Promise<SamplingProfile> {
  return await profile(() => Bun.sleep(seconds * 1000), intervalMicros);
}

/** Converts a JSC sampling profile to a `.cpuprofile` call tree (frames are innermost first in JSC's traces). */
export function toCpuProfile(p: SamplingProfile): CpuProfile {
  const root = { id: 1, callFrame: frame('(root)', '', UNKNOWN, UNKNOWN, 0), hitCount: 0, children: [] as number[] };
  const nodes = [root];
  const childIndex = new Map<string, number>();
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  const traces = p.stackTraces.traces;
  const startUs = Math.round((traces[0]?.timestamp ?? 0) * 1e6);
  let lastUs = startUs;
  for (const trace of traces) {
    let parent = root;
    for (let i = trace.frames.length - 1; i >= 0; i--) {
      const f = trace.frames[i]!;
      const key = `${parent.id}\u0000${f.name}\u0000${f.sourceURL ?? ''}\u0000${f.line}\u0000${f.column}`;
      let id = childIndex.get(key);
      if (id === undefined) {
        id = nodes.length + 1;
        childIndex.set(key, id);
        nodes.push({ id, callFrame: frame(f.name || '(anonymous)', f.sourceURL ?? '', f.line, f.column, f.sourceID), hitCount: 0, children: [] });
        parent.children.push(id);
      }
      parent = nodes[id - 1]!;
    }
    parent.hitCount++;
    samples.push(parent.id);
    const us = Math.round(trace.timestamp * 1e6);
    timeDeltas.push(us - lastUs);
    lastUs = us;
  }
  return { nodes, startTime: startUs, endTime: lastUs, samples, timeDeltas };
}

function frame(functionName: string, url: string, line: number, column: number, sourceId: number): CallFrame {
  return {
    functionName,
    scriptId: sourceId === UNKNOWN ? '0' : String(sourceId),
    url,
    // .cpuprofile positions are 0-based; JSC's are 1-based.
    lineNumber: line === UNKNOWN ? -1 : line - 1,
    columnNumber: column === UNKNOWN ? -1 : column - 1,
  };
}
