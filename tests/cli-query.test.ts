/** `svc query`, `svc export`, `svc write` and `svc completion` end to end against a real server. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { tableFromIPC } from 'apache-arrow';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../src/duckdb/index.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from './helpers/server.ts';

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts');
const T0 = Date.UTC(2024, 0, 1); // 2024-01-01T00:00:00Z
let s: TestServer;
let dir: string;

beforeAll(async () => {
  s = await startServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-query-'));
  // 6 rows, one per 10 minutes, two hosts; a field that needs CSV quoting.
  const lines = Array.from({ length: 6 }, (_, i) => `cpu,host=${i % 2 ? 'b' : 'a'} usage=${i * 1.5},note="x, \\"y\\"" ${(T0 + i * 600_000) * 1_000_000}`);
  const res = await s.fetch('/write?db=clidb', { method: 'POST', body: lines.join('\n') });
  expect(res.status).toBe(204);
});
afterAll(async () => {
  await s?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function svc(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    stdin: opts.stdin === undefined ? 'ignore' : new Blob([opts.stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, SVC_TOKEN: ADMIN_TOKEN, ...opts.env },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout: new TextDecoder().decode(stdout), bytes: new Uint8Array(stdout), stderr, code };
}

describe('svc query', () => {
  test('a readable table by default: aligned columns, numbers right-aligned, row count and times', async () => {
    const r = await svc(['query', '--url', s.url, '--db', 'clidb', 'SELECT host, usage FROM cpu ORDER BY time LIMIT 3']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 5)).toEqual(['host | usage', '-----+------', 'a    |     0', 'b    |   1.5', 'a    |     3']);
    expect(lines[5]).toMatch(/^\(3 rows, server [\d.]+ ms, total \d+ ms\)$/);
  });

  test('csv, json and arrow formats', async () => {
    const sql = 'SELECT time, host, note FROM clidb.cpu ORDER BY time LIMIT 2';
    const csv = await svc(['query', '--url', s.url, '--format', 'csv', sql]);
    expect(csv.stdout).toBe('time,host,note\n2024-01-01T00:00:00Z,a,"x, ""y"""\n2024-01-01T00:10:00Z,b,"x, ""y"""\n');
    const json = await svc(['query', '--url', s.url, '--format', 'json', sql]);
    const body = JSON.parse(json.stdout);
    expect(body.columns).toEqual(['time', 'host', 'note']);
    expect(body.row_count).toBe(2);
    const arrow = await svc(['query', '--url', s.url, '--format', 'arrow', sql]);
    expect(arrow.code).toBe(0);
    const table = tableFromIPC(arrow.bytes);
    expect(table.numRows).toBe(2);
    expect(table.getChild('host')!.toArray()).toEqual(['a', 'b']);
  });

  test('- reads the SQL from stdin', async () => {
    const r = await svc(['query', '--url', s.url, '--format', 'csv', '-'], { stdin: 'SELECT count(*) AS n FROM clidb.cpu\n' });
    expect(r.stdout).toBe('n\n6\n');
  });

  test("errors exit non-zero with the server's message", async () => {
    const bad = await svc(['query', '--url', s.url, 'SELECT nope FROM clidb.cpu']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^svc query: 400: .*nope/);
    const refused = await svc(['query', '--url', s.url, 'SELECT 1'], { env: { SVC_TOKEN: 'svc_wrong_token_0123456789abcdefghijklmnopqrstu' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^svc query: 401: invalid or revoked token/);
    const write = await svc(['query', '--url', s.url, 'DROP TABLE x']);
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/^svc query: 400: /);
    const unreachable = await svc(['query', '--url', 'http://127.0.0.1:9', 'SELECT 1']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    const usage = await svc(['query', '--url', s.url, '--format', 'xml', 'SELECT 1']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/unknown format 'xml'/);
  });
});

describe('svc export', () => {
  test('parquet of a time range: the rows in [from, to), ordered, types kept; no progress bar when piped', async () => {
    const out = join(dir, 'cpu.parquet');
    const r = await svc(['export', '--url', s.url, '--db', 'clidb', '--measurement', 'cpu', '--from', '2024-01-01T00:10:00Z', '--to', String(T0 + 40 * 60_000), '--format', 'parquet', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('[#');
    expect(r.stderr).toMatch(/exported 3 rows of clidb\.cpu to .*cpu\.parquet/);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const rows = (await conn.runAndReadAll(`SELECT epoch_us(time) AS t, host, usage, typeof(time) AS tt, typeof(usage) AS ut FROM read_parquet('${out}')`)).getRowObjectsJS();
    conn.closeSync();
    db.closeSync();
    expect(rows.map((x) => [Number(x.t), x.host, x.usage])).toEqual([
      [(T0 + 10 * 60_000) * 1000, 'b', 1.5],
      [(T0 + 20 * 60_000) * 1000, 'a', 3],
      [(T0 + 30 * 60_000) * 1000, 'b', 4.5],
    ]);
    expect(rows[0]!.tt).toMatch(/^TIMESTAMP/);
    expect(rows[0]!.ut).toBe('DOUBLE');
  });

  test('csv of a whole measurement', async () => {
    const out = join(dir, 'cpu.csv');
    const r = await svc(['export', '--url', s.url, '--db', 'clidb', '--measurement', 'cpu', '--format', 'csv', '--out', out]);
    expect(r.code).toBe(0);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[0]!.split(',').sort()).toEqual(['host', 'note', 'time', 'usage']);
    expect(lines[1]).toContain('2024-01-01T00:00:00.000000Z');
  });

  test('a failed export leaves no file and says why', async () => {
    const out = join(dir, 'none.csv');
    const r = await svc(['export', '--url', s.url, '--db', 'clidb', '--measurement', 'cpu', '--format', 'csv', '--out', out], { env: { SVC_TOKEN: 'svc_wrong_token_0123456789abcdefghijklmnopqrstu' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/svc export: 401/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    const bad = await svc(['export', '--url', s.url, '--db', 'clidb', '--measurement', 'c/pu', '--format', 'csv', '--out', out]);
    expect(bad.code).toBe(2);
    const badTime = await svc(['export', '--url', s.url, '--db', 'clidb', '--measurement', 'cpu', '--from', 'yesterday', '--format', 'csv', '--out', out]);
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toMatch(/--from: expected an RFC 3339 time/);
  });
});

describe('svc write', () => {
  test('a line-protocol file is written and queryable', async () => {
    const file = join(dir, 'mem.lp');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => `mem,host=z used=${i} ${(T0 + i * 1000) * 1_000_000}`).join('\n') + '\n');
    const r = await svc(['write', file, '--url', s.url, '--db', 'clidb']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/imported 50 rows/);
    const q = await svc(['query', '--url', s.url, '--format', 'csv', 'SELECT count(*) AS n, sum(used) AS s FROM clidb.mem']);
    expect(q.stdout).toBe('n,s\n50,1225\n');
  });

  test('a file that is neither line protocol nor CSV is refused', async () => {
    const file = join(dir, 'x.parquet');
    writeFileSync(file, 'PAR1');
    const r = await svc(['write', file, '--url', s.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/neither line protocol/);
  });
});

describe('svc completion', () => {
  test('bash: completes commands, flags and formats', async () => {
    const script = (await svc(['completion', 'bash'])).stdout;
    const complete = (words: string[]) => {
      const cmd = `source /dev/stdin; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; echo "\${COMPREPLY[@]}"`;
      return Bun.spawnSync(['bash', '-c', cmd], { stdin: new Blob([script]) }).stdout.toString().trim();
    };
    expect(complete(['svc', 'qu'])).toBe('query');
    expect(complete(['svc', 'export', '--f']).split(' ').sort()).toEqual(['--format', '--from']);
    expect(complete(['svc', 'query', '--format', ''])).toBe('table csv json arrow');
    expect(complete(['svc', 'completion', ''])).toBe('bash zsh');
  });

  test('zsh: a #compdef function naming every command; an unknown shell is a usage error', async () => {
    const script = (await svc(['completion', 'zsh'])).stdout;
    expect(script.startsWith('#compdef svc\n')).toBe(true);
    for (const c of ['query', 'export', 'write', 'completion', 'import', 'backup']) expect(script).toContain(`    ${c}) _arguments`);
    expect(script).toContain("'--format[output or input format]:format:(parquet csv)'");
    const bad = await svc(['completion', 'fish']);
    expect(bad.code).toBe(2);
  });
});
