import { memoryUsage as jscMemoryUsage } from 'bun:jsc';
import { cpus } from 'node:os';

/**
 * Process memory as the spec's Go-named figures mean it, from Bun/JSC:
 * - `alloc`: bytes of live JavaScript heap objects (and the memory they own, such as string contents);
 * - `heapAlloc`: bytes the JavaScript heap has reserved for objects (its capacity);
 * - `sys`: resident set size, the figure to hold against a container limit.
 * Each read is a few microseconds, so scrapes may call it freely.
 */
export function readMemory(): { alloc: number; heapAlloc: number; sys: number } {
  const m = process.memoryUsage();
  return { alloc: m.heapUsed, heapAlloc: m.heapTotal, sys: m.rss };
}

/** GC figures kept by the GC counter, passed in so this file stays a pure reader. */
export interface GcFigures {
  cycles: number;
  lastAt: number | null;
}

/**
 * Runtime and memory detail for GET /api/v1/metrics/memory. Deliberately avoids `heapStats()`, which walks
 * the whole heap (tens of milliseconds on a large one); the diagnostics listener serves that.
 */
export function memoryDetail(gc: GcFigures, pendingOperations: number, startedAt: number) {
  const m = process.memoryUsage();
  const j = jscMemoryUsage();
  return {
    memory: {
      alloc_bytes: m.heapUsed,
      heap_alloc_bytes: m.heapTotal,
      sys_bytes: m.rss,
      heap_used_bytes: m.heapUsed,
      heap_total_bytes: m.heapTotal,
      external_bytes: m.external,
      array_buffers_bytes: m.arrayBuffers,
      rss_bytes: j.current,
      peak_rss_bytes: j.peak,
      native_committed_bytes: j.currentCommit,
      peak_native_committed_bytes: j.peakCommit,
      page_faults: j.pageFaults,
    },
    gc: {
      cycles: gc.cycles,
      last_gc_time: gc.lastAt === null ? null : new Date(gc.lastAt).toISOString(),
    },
    runtime: {
      pending_operations: pendingOperations,
      num_cpu: cpus().length,
      bun_version: Bun.version,
      platform: process.platform,
      arch: process.arch,
      pid: process.pid,
      uptime_secs: Math.round((Date.now() - startedAt) / 10) / 100,
    },
  };
}

/** The response body of GET /api/v1/metrics/memory without its timestamp. */
export type MemoryDetail = ReturnType<typeof memoryDetail>;
