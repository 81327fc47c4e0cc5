import { fullGC, heapStats, memoryUsage } from 'bun:jsc';
import type { Logger } from '../logger.ts';
import { sampleCpu, toCpuProfile } from './cpu-profile.ts';

/** What the profile routes read from the rest of the process. */
export interface PprofDeps {
  logger: Logger;
  /** In-flight work by kind (requests per listener, ...): the goroutine-equivalent figures. */
  activity: () => Record<string, number>;
}

const INDEX = `svc diagnostics (JavaScriptCore / Bun ${Bun.version})

/debug/pprof/heap        heap snapshot (V8 .heapsnapshot for Chrome DevTools; ?format=jsc for Safari's format; ?gc=1 collects first)
/debug/pprof/heapstats   JavaScriptCore heap statistics: object counts by type, heap size and capacity, allocator figures
/debug/pprof/profile     CPU profile: ?seconds=N (1-300, default 30), ?format=cpuprofile (default, Chrome DevTools) or text
/debug/pprof/goroutine   in-flight work (the nearest equivalent of goroutines): requests per listener
/debug/pprof/cmdline     the command line of this process
`;

const json = (body: unknown, status = 200) => Response.json(body, { status });
const fail = (status: number, error: string) => json({ error }, status);

/** Reads an integer query parameter within [min, max]; a string is the error message. */
function intParam(url: URL, name: string, def: number, min: number, max: number): number | string {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) return `${name}: must be a whole number from ${min} to ${max}`;
  return n;
}

/** The fetch handler of the diagnostics listener: profile routes under /debug/pprof/. */
export function pprofHandler(deps: PprofDeps): (req: Request) => Promise<Response> {
  let profiling = false;

  const cpu = async (url: URL): Promise<Response> => {
    const seconds = intParam(url, 'seconds', 30, 1, 300);
    if (typeof seconds === 'string') return fail(400, seconds);
    const format = url.searchParams.get('format') ?? 'cpuprofile';
    if (format !== 'cpuprofile' && format !== 'text') return fail(400, 'format: must be cpuprofile or text');
    // JavaScriptCore has one sampling profiler per VM: overlapping runs would mix their samples.
    if (profiling) return fail(409, 'a CPU profile is already running; try again when it ends');
    profiling = true;
    try {
      deps.logger.info('cpu profile started', { seconds });
      const p = await sampleCpu(seconds);
      if (format === 'text') return new Response(`${p.functions}\n${p.bytecodes}`, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
      return new Response(JSON.stringify(toCpuProfile(p)), {
        headers: { 'content-type': 'application/json', 'content-disposition': `attachment; filename="svc-${Date.now()}.cpuprofile"` },
      });
    } finally {
      profiling = false;
    }
  };

  const heap = (url: URL): Response => {
    const format = url.searchParams.get('format') ?? 'v8';
    if (format !== 'v8' && format !== 'jsc') return fail(400, 'format: must be v8 or jsc');
    if (url.searchParams.get('gc') === '1') fullGC();
    deps.logger.info('heap snapshot requested', { format });
    const body = format === 'v8' ? Bun.generateHeapSnapshot('v8', 'arraybuffer') : JSON.stringify(Bun.generateHeapSnapshot());
    return new Response(body, {
      headers: { 'content-type': 'application/json', 'content-disposition': `attachment; filename="svc-${Date.now()}.heapsnapshot"` },
    });
  };

  const goroutine = (): Response => {
    const activity = deps.activity();
    const total = Object.values(activity).reduce((a, v) => a + v, 0);
    return json({ pending_operations: total, by_kind: activity });
  };

  return async (req) => {
    const url = new URL(req.url);
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'only GET is served here');
    switch (url.pathname.replace(/\/+$/, '')) {
      case '/debug/pprof':
        return new Response(INDEX, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
      case '/debug/pprof/heap':
        return heap(url);
      case '/debug/pprof/heapstats':
        return json({ heap: heapStats(), process: process.memoryUsage(), allocator: memoryUsage() });
      case '/debug/pprof/profile':
        return await cpu(url);
      case '/debug/pprof/goroutine':
        return goroutine();
      case '/debug/pprof/cmdline':
        return new Response(process.argv.join('\u0000'), { headers: { 'content-type': 'text/plain; charset=utf-8' } });
      default:
        return fail(404, `no diagnostics route ${url.pathname}; see /debug/pprof/`);
    }
  };
}
