/** `svc import <file>` against a running server: format from the extension, progress on stderr, result on stdout, exit codes. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts');
let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-import-cli-'));
});
afterAll(async () => {
  await s?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function svc(...args: string[]) {
  const proc = Bun.spawn([process.execPath, MAIN, 'import', ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, SVC_TOKEN: ADMIN_TOKEN } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe('svc import', () => {
  test('a gzipped CSV: format from the extension, progress bar on stderr, JSON result on stdout', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `${1_709_251_200 + i},${i}`).join('\n');
    const file = join(dir, 'metrics.csv.gz');
    writeFileSync(file, gzipSync(`ts,v\n${rows}\n`));
    const r = await svc(file, '--measurement', 'cli_csv', '--db', 'climp', '--time-column', 'ts', '--time-format', 'epoch_s', '--url', s.url);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\[#+\] 100%/);
    expect(r.stderr).toMatch(/imported 20000 rows into climp\.cli_csv \(6 hourly files\) in [\d.]+ s: \d+ rows\/s/);
    expect(JSON.parse(r.stdout).result).toMatchObject({ database: 'climp', measurement: 'cli_csv', rows_imported: 20_000, partitions_created: 6 });
    const q = await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*), sum(v) FROM climp.cli_csv' });
    expect(q.body.data).toEqual([[20_000, 199_990_000]]);
  });

  test('a line-protocol file counts rows per second while sending; the token flag works too', async () => {
    const file = join(dir, 'points.lp');
    writeFileSync(file, Array.from({ length: 1000 }, (_, i) => `m,host=a v=${i} ${1_709_251_200_000 + i}`).join('\n') + '\n');
    const r = await svc(file, '--db', 'climp', '--url', s.url, '--token', ADMIN_TOKEN, '--precision', 'ms');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/rows\/s/);
    expect(JSON.parse(r.stdout).result.rows_imported).toBe(1000);
  });

  test('usage errors exit 2; a refused import exits 1 with the server message', async () => {
    writeFileSync(join(dir, 'x.dat'), 'x');
    expect((await svc(join(dir, 'x.dat'), '--measurement', 'm', '--url', s.url)).stderr).toMatch(/cannot guess the format of .*x\.dat.*--format csv\|parquet\|lp\|tle/);
    expect((await svc(join(dir, 'x.dat'), '--measurement', 'm', '--url', s.url)).code).toBe(2);
    expect((await svc(join(dir, 'missing.csv'), '--measurement', 'm')).code).toBe(2);
    expect((await svc(join(dir, 'x.dat'), '--format', 'csv', '--url', s.url)).stderr).toMatch(/--measurement is required/);
    writeFileSync(join(dir, 'bad.csv'), 'time,v\n2024-01-01T00:00:00Z,1,2\n');
    const r = await svc(join(dir, 'bad.csv'), '--measurement', 'm', '--db', 'climp', '--url', s.url);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/import failed \(400\): cannot import CSV: line 2: ragged row/);
  });
});
