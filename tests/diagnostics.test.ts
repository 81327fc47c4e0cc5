/**
 * The diagnostics (profiling) listener against real servers: off unless SVC_DEBUG_PPROF is truthy,
 * loopback only unless explicitly allowed, a port conflict logged while the service carries on, the
 * profile routes under /debug/pprof/, and closed at shutdown.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { startServer, type TestServer } from './helpers/server.ts';

const started: TestServer[] = [];
async function start(env: Record<string, string>): Promise<TestServer> {
  const s = await startServer({ env });
  started.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(started.map((s) => s.cleanup()));
});

/** The address from the "diagnostics listener started" line. */
function listenerAddr(s: TestServer): string {
  const m = /diagnostics listener started.*?addr=(\S+)/.exec(s.output());
  if (!m) throw new Error(`no listener line in:\n${s.output()}`);
  return m[1]!;
}

describe('diagnostics listener', () => {
  test('is off unless SVC_DEBUG_PPROF is 1, true, yes or on', async () => {
    const s = await start({ SVC_DEBUG_PPROF: 'maybe', SVC_DEBUG_PPROF_ADDR: '127.0.0.1:0' });
    expect(s.output()).not.toContain('diagnostics listener');
    expect((await fetch(s.url + '/health')).status).toBe(200);
  });

  test('serves the profile routes on loopback and closes at shutdown', async () => {
    const s = await start({ SVC_DEBUG_PPROF: 'YES', SVC_DEBUG_PPROF_ADDR: '127.0.0.1:0' });
    const base = `http://${listenerAddr(s)}`;
    expect(listenerAddr(s)).toMatch(/^127\.0\.0\.1:\d+$/);

    const index = await fetch(base + '/debug/pprof/');
    expect(index.status).toBe(200);
    for (const route of ['heap', 'heapstats', 'profile', 'goroutine']) expect(await index.clone().text()).toContain(`/debug/pprof/${route}`);

    const goroutine = (await (await fetch(base + '/debug/pprof/goroutine')).json()) as { pending_operations: number; by_kind: Record<string, number> };
    expect(goroutine.by_kind).toHaveProperty('http_requests');
    expect(goroutine.pending_operations).toBe(Object.values(goroutine.by_kind).reduce((a, b) => a + b, 0));

    const stats = (await (await fetch(base + '/debug/pprof/heapstats')).json()) as { heap: { heapSize: number; objectTypeCounts: Record<string, number> } };
    expect(stats.heap.heapSize).toBeGreaterThan(0);
    expect(Object.keys(stats.heap.objectTypeCounts).length).toBeGreaterThan(0);

    const heap = await fetch(base + '/debug/pprof/heap');
    expect(heap.status).toBe(200);
    expect(heap.headers.get('content-disposition')).toContain('.heapsnapshot');
    const snapshot = (await heap.json()) as { snapshot: { node_count: number; meta: { node_fields: string[] } } };
    expect(snapshot.snapshot.meta.node_fields).toContain('self_size');
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);

    // Keep the main listener busy while the profile runs so it has JavaScript to sample.
    const profiling = fetch(base + '/debug/pprof/profile?seconds=1');
    await Bun.sleep(100);
    const busy = await fetch(base + '/debug/pprof/profile?seconds=1');
    expect(busy.status).toBe(409);
    for (let i = 0; i < 50; i++) await fetch(s.url + '/api/v1/metrics/endpoints');
    const profile = await profiling;
    expect(profile.status).toBe(200);
    const cpu = (await profile.json()) as { nodes: { id: number; callFrame: { functionName: string } }[]; samples: number[]; timeDeltas: number[] };
    expect(cpu.nodes[0]!.callFrame.functionName).toBe('(root)');
    expect(cpu.samples.length).toBe(cpu.timeDeltas.length);
    expect(cpu.samples.length).toBeGreaterThan(0);
    const ids = new Set(cpu.nodes.map((n) => n.id));
    expect(cpu.samples.every((id) => ids.has(id))).toBe(true);

    for (const bad of ['seconds=0', 'seconds=301', 'seconds=x', 'format=pprof'])
      expect([bad, (await fetch(`${base}/debug/pprof/profile?${bad}`)).status]).toEqual([bad, 400]);
    expect((await fetch(base + '/debug/pprof/heap?format=png')).status).toBe(400);
    expect((await fetch(base + '/debug/pprof/threadcreate')).status).toBe(404);

    expect(await s.stop()).toBe(0);
    expect(await fetch(base + '/debug/pprof/').then(() => 'open', () => 'closed')).toBe('closed');
  }, 30_000);

  test('a non-loopback address is refused and logged; the service keeps running', async () => {
    for (const addr of ['0.0.0.0:0', ':0', 'example.com:6060']) {
      const s = await start({ SVC_DEBUG_PPROF: '1', SVC_DEBUG_PPROF_ADDR: addr });
      expect(s.output()).toContain('diagnostics listener refused');
      expect(s.output()).toContain('SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK');
      expect(s.output()).not.toContain('diagnostics listener started');
      expect((await fetch(s.url + '/health')).status).toBe(200);
      await s.stop();
    }
  });

  test('SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK permits a non-loopback address', async () => {
    const s = await start({ SVC_DEBUG_PPROF: 'on', SVC_DEBUG_PPROF_ADDR: '0.0.0.0:0', SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK: 'true' });
    const port = listenerAddr(s).split(':').at(-1);
    expect((await fetch(`http://127.0.0.1:${port}/debug/pprof/`)).status).toBe(200);
    await s.stop();
  });

  test('a port conflict is logged and the service carries on without the listener', async () => {
    const occupier = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('occupied') });
    try {
      const s = await start({ SVC_DEBUG_PPROF: 'true', SVC_DEBUG_PPROF_ADDR: `127.0.0.1:${occupier.port}` });
      expect(s.output()).toMatch(/diagnostics listener not started .*address already in use/);
      expect((await fetch(s.url + '/health')).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${occupier.port}/debug/pprof/`)).text()).toBe('occupied');
      await s.stop();
    } finally {
      occupier.stop(true);
    }
  });

  test('binds 127.0.0.1:6060 by default', async () => {
    const s = await start({ SVC_DEBUG_PPROF: '1' });
    // Another process may hold 6060; either way the address tried is the default one.
    expect(s.output()).toMatch(/diagnostics listener (started|not started) .*addr=127\.0\.0\.1:6060/);
    await s.stop();
  });
});
