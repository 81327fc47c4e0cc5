/** POST /api/v1/import/csv end to end: a 1-million-row file, every option, every bad input, all-or-nothing. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { gzipSync } from 'node:zlib';
import { dataFiles } from './helpers/parquet.ts';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();
let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.cleanup());

const T0 = Date.UTC(2024, 0, 1); // ms
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const importCsv = async (query: string, body: RequestInit['body'], headers: Record<string, string> = { 'content-type': 'text/csv' }): Promise<{ status: number; body: any }> => {
  const res = await s.fetch(`/api/v1/import/csv?${query}`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
};
const sql = async (q: string) => {
  const r = await json(s, 'POST', '/api/v1/query', { sql: q });
  expect(r.status).toBe(200);
  return r.body as { columns: string[]; types: string[]; data: unknown[][] };
};

describe('CSV import', () => {
  test('one million rows: hourly files, exact values and time range', async () => {
    // 1M rows, one every 86.4 ms: exactly one day, i.e. 24 hourly partitions; hosts h0..h9.
    const parts: string[] = ['time,host,cpu,count,ok\n'];
    for (let i = 0; i < 1_000_000; i++) parts.push(`${new Date(T0 + Math.floor(i * 86.4)).toISOString()},h${i % 10},${(i % 1000) / 4},${i},${i % 2 === 0}\n`);
    const body = parts.join('');
    // How fast this shape imports is bench/import.bench.ts's `day` line; here only what it produces.
    const r = await importCsv('measurement=big&db=imp', body);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'success',
      result: {
        database: 'imp',
        measurement: 'big',
        rows_imported: 1_000_000,
        partitions_created: 24,
        time_range_min: '2024-01-01T00:00:00Z',
        time_range_max: new Date(T0 + Math.floor(999_999 * 86.4)).toISOString().replace('.000Z', 'Z'),
        columns: ['time', 'host', 'cpu', 'count', 'ok'],
        duration_ms: r.body.result.duration_ms,
      },
    });
    const files = dataFiles(s.dir).filter((f) => f.startsWith('imp/big/'));
    expect(files).toHaveLength(24);
    expect(files[0]).toMatch(/^imp\/big\/2024\/01\/01\/00\/big_\d{8}_\d{6}_\d{9}\.parquet$/);
    const q = await sql(
      `SELECT count(*) AS n, sum(count) AS s, min(time) AS lo, max(time) AS hi, count(DISTINCT host) AS hosts, sum(cpu) AS cpu, count(*) FILTER (WHERE ok) AS oks FROM imp.big`,
    );
    expect(q.data[0]).toEqual([1_000_000, 499_999_500_000, '2024-01-01T00:00:00Z', r.body.result.time_range_max, 10, 124_875_000, 500_000]);
    const types = await sql(`SELECT typeof(time), typeof(host), typeof(cpu), typeof(count), typeof(ok) FROM imp.big LIMIT 1`);
    expect(types.data[0]).toEqual(['TIMESTAMP', 'VARCHAR', 'DOUBLE', 'BIGINT', 'BOOLEAN']);
  }, 60_000);

  test('time_column is renamed time; time_format epoch_s, epoch_ms, epoch_us, epoch_ns', async () => {
    const t = 1_704_067_200; // 2024-01-01T00:00:00Z
    const cases: [string, string][] = [
      ['epoch_s', `${t}.5`],
      ['epoch_ms', `${t * 1000 + 500}`],
      ['epoch_us', `${t * 1_000_000 + 500_000}`],
      ['epoch_ns', `${t}500000123`],
    ];
    for (const [format, value] of cases) {
      const r = await importCsv(`measurement=fmt_${format}&db=imp&time_column=ts&time_format=${format}`, `v,ts\n1,${value}\n`);
      expect(r.status).toBe(200);
      expect(r.body.result.columns).toEqual(['time', 'v']);
      expect(r.body.result.time_range_min).toBe('2024-01-01T00:00:00.5Z');
    }
  });

  test('auto-detect: epoch milliseconds by magnitude, RFC 3339 with offsets, zone-less text as UTC', async () => {
    let r = await importCsv('measurement=auto_ms&db=imp', `time,v\n${T0 + 1},1\n${T0 + 3_600_000},2\n`);
    expect(r.body.result).toMatchObject({ rows_imported: 2, partitions_created: 2, time_range_min: '2024-01-01T00:00:00.001Z', time_range_max: '2024-01-01T01:00:00Z' });
    r = await importCsv('measurement=auto_text&db=imp', 'time,v\n2024-01-01T02:00:00+02:00,1\n2024-01-01 01:30:00,2\n');
    expect(r.body.result).toMatchObject({ rows_imported: 2, partitions_created: 2, time_range_min: '2024-01-01T00:00:00Z', time_range_max: '2024-01-01T01:30:00Z' });
  });

  test('delimiter (semicolon, tab), skip_rows, db from x-svc-database, multipart and gzip bodies', async () => {
    let r = await importCsv('measurement=semi&delimiter=%3B&skip_rows=2', 'exported by tool\n# generated\ntime;v;note\n2024-01-01T00:00:00Z;1,5;a b\n', {
      'content-type': 'text/csv',
      'x-svc-database': 'imp2',
    });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ database: 'imp2', measurement: 'semi', rows_imported: 1, columns: ['time', 'v', 'note'] });
    expect((await sql(`SELECT v, note FROM imp2.semi`)).data).toEqual([['1,5', 'a b']]);

    r = await importCsv('measurement=tabs&db=imp&delimiter=tab', 'time\tv\n2024-01-01T00:00:00Z\t7\n');
    expect(r.body.result.rows_imported).toBe(1);

    const form = new FormData();
    form.append('note', 'ignored field');
    form.append('file', new Blob(['time,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,2\n']), 'data.csv');
    r = await importCsv('measurement=multi&db=imp', form, {});
    expect(r.status).toBe(200);
    expect(r.body.result.rows_imported).toBe(2);

    r = await importCsv('measurement=zipped&db=imp', gzipSync('time,v\n2024-01-01T00:00:00Z,1\n'), { 'content-type': 'text/csv' });
    expect(r.status).toBe(200);
    expect(r.body.result.rows_imported).toBe(1);
  });

  test('a type guess from the first rows that a later row breaks is widened, not an error', async () => {
    const rows = Array.from({ length: 30_000 }, (_, i) => `${T0 + i},${i}`);
    const r = await importCsv('measurement=widen&db=imp', `time,v\n${rows.join('\n')}\n${T0 + 40_000},not-a-number\n`);
    expect(r.status).toBe(200);
    expect((await sql(`SELECT typeof(v) FROM imp.widen LIMIT 1`)).data[0]).toEqual(['VARCHAR']);
  });

  describe('bad input: 400 naming the row or line and why, nothing stored', () => {
    const cases: [string, string, string, RegExp][] = [
      ['wrong delimiter', 'delimiter=%3B', 'time,v\n2024-01-01T00:00:00Z,1\n', /unknown time column 'time'.*is the delimiter "," rather than ";"/],
      ['ragged row', '', 'time,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,2,3\n', /line 3: ragged row: expected columns: 2, found: 3/],
      ['unknown time column', 'time_column=ts', 'time,v\n2024-01-01T00:00:00Z,1\n', /unknown time column 'ts': the columns are 'time', 'v'/],
      ['unparsable time', '', 'time,v\n2024-01-01T00:00:00Z,1\nyesterday,2\n', /data row 2 \(line 3\): cannot read time value 'yesterday' in column 'time'/],
      ['non-number with time_format', 'time_format=epoch_s', 'time,v\n1704067200,1\nsoon,2\n', /line 3: column 'time': Could not convert string "soon"/],
      ['empty time value', '', 'time,v\n2024-01-01T00:00:00Z,1\n,2\n', /data row 2 \(line 3\): the time column 'time' is empty/],
      ['empty file', '', '', /cannot import CSV: the file is empty/],
      ['header only', '', 'time,v\n', /no data rows/],
      ['time column named twice', 'time_column=ts', 'ts,time\n1,2\n', /column 'time' clashes with the time column/],
    ];
    for (const [name, query, body, message] of cases)
      test(name, async () => {
        const r = await importCsv(`measurement=bad&db=imp&${query}`, body);
        expect(r.status).toBe(400);
        expect(r.body.error).toMatch(message);
      });

    test('after all of them, measurement bad has no file and no row', async () => {
      expect(dataFiles(s.dir).filter((f) => f.startsWith('imp/bad/'))).toEqual([]);
      expect((await sql(`SELECT count(*) FROM imp.bad`)).data).toEqual([[0]]);
    });

    test('a failed import into an existing measurement leaves its rows as they were', async () => {
      const before = (await sql(`SELECT count(*), sum(count) FROM imp.big`)).data;
      const r = await importCsv('measurement=big&db=imp', 'time,host,cpu,count,ok\n2030-01-01T00:00:00Z,h1,1,1,true\nlater,h1,1,1,true\n');
      expect(r.status).toBe(400);
      expect((await sql(`SELECT count(*), sum(count) FROM imp.big`)).data).toEqual(before);
    });
  });

  test('write permission is required; a body declared larger than 500 MB is refused before it is read', async () => {
    const reader = (await json(s, 'POST', '/api/v1/auth/tokens', { name: 'import-reader', permissions: ['read'] })).body.token as string;
    const res = await s.fetch('/api/v1/import/csv?measurement=x&db=imp', { method: 'POST', token: reader, body: 'time,v\n1,1\n' });
    expect(res.status).toBe(403);
    // A raw request: fetch would not send a Content-Length that its body does not have.
    const { port, hostname } = new URL(s.url);
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      Bun.connect({
        hostname,
        port: Number(port),
        socket: {
          open(sock) {
            sock.write(`POST /api/v1/import/csv?measurement=x&db=imp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: text/csv\r\nContent-Length: ${501 * 1024 * 1024}\r\n\r\ntime,v\n`);
          },
          data(sock, data) {
            text += data.toString();
            if (text.includes('\r\n\r\n')) sock.end();
          },
          close: () => resolve(text),
          error: (_s, err) => reject(err),
        },
      });
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
  });
});
