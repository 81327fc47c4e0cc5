/**
 * Micro-benchmark of the line-protocol parser: 1M lines of the reference shape, parsed from bytes.
 * Then the decompression step before it: how soon a 64 MiB gzip or zstd bomb is stopped at a 1 MiB cap.
 * Run: bun bench/lineprotocol-parse.bench.ts [lines] [rounds]
 */
import { bombWithCorruptTail } from '../src/ingest/bomb-test-support.ts';
import { decompress } from '../src/ingest/index.ts';
import { parseLineProtocol } from '../src/ingest/lineprotocol/index.ts';

const lines = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 7);

function body(shape: (i: number) => string): Uint8Array {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(shape(i));
  return new TextEncoder().encode(parts.join('\n') + '\n');
}

const shapes: Record<string, (i: number) => string> = {
  reference: (i) =>
    `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=12.5,usage_system=3.1,usage_idle=80.2,io_wait=0.4,load=1.25 ${1700000000000000000 + i * 1000}`,
  'varied floats': (i) =>
    `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(i % 9973) / 97},usage_system=${(i % 101) * 0.37},usage_idle=80.2,io_wait=${i % 7}.04,load=1.25 ${1700000000000000000 + i * 1000}`,
  'ints, bools, strings': (i) =>
    `events,host=host_${i % 100} count=${i}i,ok=${i % 2 ? 'true' : 'f'},msg="request ${i % 50} done",latency=${i % 1000}.5 ${1700000000000000000 + i * 1000}`,
};

for (const [name, shape] of Object.entries(shapes)) {
  const bytes = body(shape);
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    const result = parseLineProtocol(bytes, { precision: 'ns', now: Date.now() * 1000 });
    const ms = performance.now() - started;
    if (result.errors.length > 0 || result.batches[0].length !== lines) throw new Error(`bench body did not parse: ${result.errors[0]?.message}`);
    rates.push(lines / (ms / 1000));
  }
  rates.sort((a, b) => a - b);
  const median = rates[rates.length >> 1];
  const mb = bytes.length / 1e6;
  console.log(
    `${name.padEnd(22)} ${(median / 1e6).toFixed(2)} M lines/s (best ${(rates[rates.length - 1] / 1e6).toFixed(2)}), ` +
      `${((median * bytes.length) / lines / 1e6).toFixed(0)} MB/s, body ${mb.toFixed(0)} MB`,
  );
}

for (const format of ['gzip', 'zstd'] as const) {
  const bomb = bombWithCorruptTail(format);
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    try {
      decompress(bomb, 1 << 20);
    } catch {
      // 'too_large' is the expected end
    }
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  console.log(`${`${format} bomb stopped`.padEnd(22)} ${ms[ms.length >> 1]!.toFixed(1)} ms median (64 MiB body capped at 1 MiB)`);
}
