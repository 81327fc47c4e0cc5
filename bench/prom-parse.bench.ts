/**
 * Micro-benchmark of the remote-write decode path in process, stage by stage, on the payload of
 * `bench:prom` (2,000 series per body, 10 metrics, 64 bodies one scrape apart): snappy alone (into the
 * reused buffer, as decoding does), decode
 * (snappy + protobuf -> column batches), and the flush's coalescing of those batches (what crosses
 * to the flush worker: `toWire`), for 1.0 and 2.0 bodies.
 * Run: bun bench/prom-parse.bench.ts [rounds]. BENCH_BASE=<dir holding another src/> adds the same
 * stages of that tree in the same run (interleaved rounds), for a before/after ratio.
 */
import { remoteWriteBody, remoteWriteBodyV2, type Series } from '../tests/helpers/prom-write.ts';

const ROUNDS = Number(process.argv[2] ?? 7);
const SERIES = 2000;
const BODIES = 64;
const METRICS = 10;
const MAX = 64 << 20;

const t0 = Date.now() - 3_600_000;
const v1: Uint8Array[] = [];
const v2: Uint8Array[] = [];
for (let b = 0; b < BODIES; b++) {
  const series: Series[] = [];
  for (let s = 0; s < SERIES; s++)
    series.push({
      labels: { __name__: `bench_metric_${s % METRICS}`, job: 'bench', instance: `host-${Math.floor(s / METRICS) % 200}:9100`, region: `r${s % 5}` },
      samples: [[Math.random() * 1000, t0 + b * 15_000]],
    });
  v1.push(remoteWriteBody(series));
  v2.push(remoteWriteBodyV2(series));
}

interface Tree {
  name: string;
  uncompress: (b: Uint8Array, max: number) => Uint8Array;
  decode1: (b: Uint8Array, max: number) => { batches: unknown[] };
  decode2: (b: Uint8Array, max: number) => { batches: unknown[] };
  toWire: (batches: never[]) => unknown;
}
async function load(name: string, src: string): Promise<Tree> {
  const prom = await import(`${src}/ingest/prom/index.ts`);
  const snappy = await import(`${src}/ingest/prom/snappy.ts`);
  const wire = await import(`${src}/ingest/batch-wire.ts`);
  return { name, uncompress: snappy.uncompressSnappyScratch, decode1: prom.decodeRemoteWrite, decode2: prom.decodeRemoteWriteV2, toWire: wire.toWire };
}
const trees = [await load('this tree', '../src')];
if (process.env.BENCH_BASE) trees.push(await load(process.env.BENCH_BASE, `${process.env.BENCH_BASE}/src`));

/**
 * CPU ms of this process so far. CPU time, not wall-clock time: on a machine shared with other work
 * a stage's wall-clock time swings by 2x from run to run as the scheduler hands the core elsewhere.
 */
function now(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU µs per body of each stage, one round over all bodies. */
function round(t: Tree): Record<string, number> {
  const out: Record<string, number> = {};
  let s = now();
  for (const b of v1) t.uncompress(b, MAX);
  out.snappy = ((now() - s) * 1000) / BODIES;
  for (const [label, bodies, decode] of [['1.0', v1, t.decode1], ['2.0', v2, t.decode2]] as const) {
    const batches: unknown[] = [];
    s = now();
    for (const b of bodies) batches.push(...decode(b, MAX).batches);
    out[`decode ${label}`] = ((now() - s) * 1000) / BODIES;
    // The flush seals one measurement at a time: its batches in arrival order.
    const byMeasurement = new Map<string, never[]>();
    for (const b of batches as { measurement: string }[]) {
      const list = byMeasurement.get(b.measurement) ?? [];
      list.push(b as never);
      byMeasurement.set(b.measurement, list);
    }
    s = now();
    for (const list of byMeasurement.values()) t.toWire(list);
    out[`coalesce ${label}`] = ((now() - s) * 1000) / BODIES;
  }
  return out;
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
for (const t of trees) for (let i = 0; i < 3; i++) round(t); // JIT warm-up
const results = trees.map(() => new Map<string, number[]>());
for (let r = 0; r < ROUNDS; r++)
  trees.forEach((t, i) => {
    for (const [k, v] of Object.entries(round(t))) results[i]!.set(k, [...(results[i]!.get(k) ?? []), v]);
  });
for (const k of results[0]!.keys()) {
  const line = trees.map((t, i) => `${t.name}: ${median(results[i]!.get(k)!).toFixed(0)} µs/body`).join(', ');
  const ratio = trees.length > 1 ? `, ratio ${(median(results[1]!.get(k)!) / median(results[0]!.get(k)!)).toFixed(2)}x faster` : '';
  console.log(`${k.padEnd(13)} ${line}${ratio} (median of ${ROUNDS} rounds, ${SERIES} samples per body)`);
}
