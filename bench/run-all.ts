/**
 * `bun run bench`: every end-to-end benchmark in turn, each in its own process so one benchmark's
 * heap and files never skew the next. Benchmarks print their own tables; nothing here asserts timing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const BENCHES = ['lineprotocol-parse', 'msgpack-parse', 'parquet-writers', 'wal', 'ingest', 'query', 'result-throughput', 'import', 'mqtt', 'memory', 'memory-forgotten', 'rbac', 'prom', 'cluster', 'tiering'];
const only = process.argv.slice(2);

for (const name of BENCHES) {
  if (only.length > 0 && !only.includes(name)) continue;
  const file = join(import.meta.dir, `${name}.bench.ts`);
  if (!existsSync(file)) {
    console.log(`\n== ${name}: not present, skipped`);
    continue;
  }
  console.log(`\n== ${name}`);
  const proc = Bun.spawn([process.execPath, file], { stdout: 'inherit', stderr: 'inherit' });
  const code = await proc.exited;
  if (code !== 0) console.log(`== ${name}: exited with ${code}`);
}
