/**
 * The Postgres wire protocol against a real server, with the real clients: `psql` (simple protocol,
 * catalog commands) and the npm `pg` client (extended protocol, parameters, prepared statements,
 * binary results, cancel requests), plus the statements Grafana's PostgreSQL data source sends.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let port = 0;

const PSQL = '/usr/bin/psql';

beforeAll(async () => {
  server = await startServer({
    env: { SVC_PGWIRE_ENABLED: 'true', SVC_PGWIRE_PORT: '0', SVC_PGWIRE_HOST: '127.0.0.1', SVC_MEMORY_ENABLED: 'false', SVC_AUDIT_LOG_ENABLED: 'true', SVC_AUDIT_LOG_INCLUDE_READS: 'true' },
  });
  port = Number(/pgwire_port"?[=:](\d+)/.exec(server.output())![1]);
  const lp = ['cpu,host=a usage=1.5,n=3i,ok=true 1700000000000000000', 'cpu,host=b usage=2.5,n=4i,ok=false 1700000060000000000', 'cpu,host=a usage=3.5,n=5i,ok=true 1700000120000000000'];
  expect((await server.fetch('/write?db=mydb', { method: 'POST', body: lp.join('\n') })).status).toBe(204);
  expect((await server.fetch('/write?db=other', { method: 'POST', body: 'mem v=1 1700000000000000000' })).status).toBe(204);
});
afterAll(async () => {
  await server?.cleanup();
});

const client = async (password = ADMIN_TOKEN, database = 'mydb', binary = false) => {
  // `binary` is a connection option in pg: its parser decodes every DataRow of the connection as binary.
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'grafana', password, database, binary } as pg.ClientConfig);
  await c.connect();
  return c;
};

async function psql(args: string[], password = ADMIN_TOKEN, p = port): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([PSQL, `host=127.0.0.1 port=${p} user=dashboards dbname=mydb sslmode=disable`, '-X', '-A', '-t', ...args], {
    env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '10' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe('pgwire with psql', () => {
  test('psql is installed (the test fails, not skips, without it)', () => {
    expect(Bun.file(PSQL).size).toBeGreaterThan(0);
  });

  test('simple protocol: one result per statement, typed text values, session functions', async () => {
    const r = await psql(['-c', "SELECT host, usage, n, ok, time FROM cpu ORDER BY time; SELECT version(), current_database(), current_schema()"]);
    expect(r.err).toBe('');
    expect(r.out.trim().split('\n')).toEqual([
      'a|1.5|3|t|2023-11-14 22:13:20+00',
      'b|2.5|4|f|2023-11-14 22:14:20+00',
      'a|3.5|5|t|2023-11-14 22:15:20+00',
      expect.stringMatching(/^PostgreSQL 14\.0 \(svc .+\)\|mydb\|mydb$/),
    ]);
  });

  test('catalog: \\dt, information_schema listings, SET and SHOW of client options', async () => {
    const r = await psql(['-c', '\\dt', '-c', "SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2", '-c', "SET application_name = 'svc-test'", '-c', 'SHOW application_name']);
    expect(r.err).toBe('');
    // Every database is a schema; \dt lists the measurements of all of them.
    expect(r.out.trim().split('\n')).toEqual(['mydb|cpu|table|dashboards', 'other|mem|table|dashboards', 'mydb|cpu', 'other|mem', 'SET', 'svc-test']);
  });

  test('a wrong token is refused at login; the query path refuses writes with a clear error', async () => {
    const bad = await psql(['-c', 'SELECT 1'], 'svc_not_a_token');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('password authentication failed');
    const write = await psql(['-c', 'DROP TABLE cpu']);
    expect(write.err).toContain('only SELECT queries are allowed');
  });
});

describe('pgwire limits', () => {
  test('before login a message may not exceed 64 KB: a larger announced length closes the connection at once', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const closed = new Promise<boolean>((r) => {
      socket.once('close', () => r(true));
      setTimeout(() => r(false), 10_000);
    });
    const head = Buffer.alloc(8);
    head.writeInt32BE(1_000_000, 0);
    head.writeInt32BE(196608, 4);
    socket.write(head);
    expect(await closed).toBe(true);
    expect(server.output()).toMatch(/invalid message length 1000000 \(at most 65536 bytes before login\)/);
  });
});

describe('pgwire login timeout and connection cap', () => {
  let limited: TestServer;
  let limitedPort = 0;
  beforeAll(async () => {
    // A login timeout long enough for the cap test's own logins on a loaded machine, short enough to wait for.
    limited = await startServer({
      env: { SVC_PGWIRE_ENABLED: 'true', SVC_PGWIRE_PORT: '0', SVC_PGWIRE_HOST: '127.0.0.1', SVC_MEMORY_ENABLED: 'false', SVC_PGWIRE_LOGIN_TIMEOUT: '5s', SVC_PGWIRE_MAX_CONNECTIONS: '3' },
    });
    limitedPort = Number(/pgwire_port"?[=:](\d+)/.exec(limited.output())![1]);
  });
  afterAll(async () => {
    await limited?.cleanup();
  });

  test('connections that never log in (nothing sent, or stopped during SCRAM) get FATAL 57P05 and are closed', async () => {
    const halfway = await RawClient.open(limitedPort);
    halfway.startup('slow', 'mydb');
    expect((await halfway.until('R')).at(-1)!.body.readInt32BE(0)).toBe(10);
    // Two more fill max_connections (3); the other six are over it and wait for a startup packet that never comes.
    const silent = await Promise.all(Array.from({ length: 8 }, () => RawClient.open(limitedPort)));
    for (const c of [...silent, halfway]) {
      const fatal = errorFields((await c.until('E')).at(-1));
      expect(fatal).toMatchObject({ S: 'FATAL', C: '57P05' });
      expect(fatal.M).toContain('pgwire.login_timeout');
      expect(await c.closed).toBe(true);
    }
    const m = (await json(limited, 'GET', '/api/v1/metrics')).body as Record<string, number>;
    expect(m.svc_pgwire_login_timeouts_total).toBe(9);
  }, 60_000);

  test('past max_connections a connection gets 53300 (pg and psql) and is closed; a closed connection frees its slot', async () => {
    const connectPg = () => new pg.Client({ host: '127.0.0.1', port: limitedPort, user: 'capped', password: ADMIN_TOKEN, database: 'mydb' });
    const held = [connectPg(), connectPg(), connectPg()];
    for (const c of held) await c.connect();
    try {
      const refused = await connectPg().connect().catch((e: { code: string; message: string }) => e);
      expect(refused).toMatchObject({ code: '53300', message: 'sorry, too many clients already' });
      const viaPsql = await psql(['-c', 'SELECT 1'], ADMIN_TOKEN, limitedPort);
      expect(viaPsql.code).not.toBe(0);
      expect(viaPsql.err).toContain('sorry, too many clients already');
      // The held connections still work.
      expect((await held[0]!.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await held.pop()!.end();
      // The server sees the close a moment later: retry until the slot is free (bounded).
      let admitted: pg.Client | null = null;
      for (const deadline = Date.now() + 30_000; !admitted && Date.now() < deadline; ) {
        const c = connectPg();
        admitted = await c.connect().then(() => c, () => null);
        if (!admitted) await Bun.sleep(50);
      }
      expect(admitted).not.toBeNull();
      held.push(admitted!);
      expect((await admitted!.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    } finally {
      await Promise.all(held.map((c) => c.end()));
    }
    const m = (await json(limited, 'GET', '/api/v1/metrics')).body as Record<string, number>;
    expect(m.svc_pgwire_connections_refused_total).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe('pgwire never echoes or logs a secret', () => {
  test('a token sent as a plain password message where SCRAM is expected, or as the user name: not in the FATAL text, stderr or /api/v1/logs', async () => {
    const created = await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-plain-password', permissions: ['read'] });
    const secret = (created.body as { token: string }).token;
    const raw = await RawClient.open();
    raw.startup('plain-client', 'mydb');
    expect((await raw.until('R')).at(-1)!.body.readInt32BE(0)).toBe(10);
    // A client that skips SCRAM: its password message reads as the SASL mechanism field.
    raw.send('p', cstr(secret));
    const fatal = errorFields((await raw.until('E')).at(-1));
    expect(await raw.closed).toBe(true);
    expect(fatal).toMatchObject({ S: 'FATAL', C: '08P01' });
    expect(fatal.M).toContain('SCRAM-SHA-256');
    expect(fatal.M).not.toContain(secret);
    // The pg client with the token in the user field and a wrong password: refused, the user name not echoed.
    const wrongField = await new pg.Client({ host: '127.0.0.1', port, user: secret, password: 'not-the-token', database: 'mydb' }).connect().catch((e: { code: string; message: string }) => e);
    expect(wrongField).toMatchObject({ code: '28P01' });
    expect((wrongField as { message: string }).message).not.toContain(secret);
    const logs = JSON.stringify((await json(server, 'GET', '/api/v1/logs?limit=1000&level=debug')).body);
    expect(logs).toContain('pgwire connection failed');
    expect(logs).toContain('pgwire authentication failed');
    expect(logs).not.toContain(secret);
    expect(server.output()).toContain('pgwire authentication failed');
    expect(server.output()).not.toContain(secret);
  });

  test('an error that quotes what the client sent (a SQL literal, a path segment) redacts a token in it, over pgwire and HTTP', async () => {
    const secret = ((await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-quoted', permissions: ['read'] })).body as { token: string }).token;
    const c = await client();
    try {
      const err = await c.query(`SELECT CAST('${secret}' AS INTEGER) AS n`).catch((e: { message: string }) => e);
      expect((err as { message: string }).message).toContain('[redacted]');
      expect((err as { message: string }).message).not.toContain(secret);
    } finally {
      await c.end();
    }
    const http = await server.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT CAST('${secret}' AS INTEGER) AS n` }) });
    const body = await http.text();
    expect(http.status).toBe(400);
    expect(body).toContain('[redacted]');
    expect(body).not.toContain(secret);
    const notFound = await server.fetch(`/api/v1/auth/tokens/${secret}`);
    expect(notFound.status).toBe(404);
    expect(await notFound.text()).not.toContain(secret);
  });
});

describe('pgwire under governance and in the query registry', () => {
  test("a token's governance policy applies to its pgwire statements (SQLSTATE 53400), which the query history lists as pgwire", async () => {
    const t = await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-governed', permissions: ['read'] });
    expect(t.status).toBe(201);
    const { id, token } = t.body as { id: string; token: string };
    expect((await json(server, 'POST', '/api/v1/governance/policies', { token_id: id, rate_limit_per_minute: 1 })).status).toBe(201);
    const c = await client(token);
    try {
      expect((await c.query('SELECT count(*)::INTEGER AS n FROM cpu')).rows).toEqual([{ n: 3 }]);
      const refused = await c.query('SELECT 1').catch((e: { code: string; message: string }) => e);
      expect(refused).toMatchObject({ code: '53400' });
      expect((refused as { message: string }).message).toContain('rate_limit_per_minute');
    } finally {
      await c.end();
    }
    const history = (await json(server, 'GET', `/api/v1/queries/history?limit=5&token_id=${id}`)).body as { queries: { source: string; database: string | null }[] };
    expect(history.queries[0]).toMatchObject({ source: 'pgwire', database: 'mydb' });
  });
});

describe('pgwire under RBAC', () => {
  test('a token narrowed by a role reads only its measurements (others 42501) and its catalog lists only those', async () => {
    const post = async (path: string, body: Record<string, unknown>) => {
      const r = await json(server, 'POST', path, body);
      expect(r.status).toBe(201);
      return (r.body as { id: string }).id;
    };
    const t = await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-narrow', permissions: ['read'] });
    const { id, token } = t.body as { id: string; token: string };
    const org = await post('/api/v1/rbac/organizations', { name: 'pg-org' });
    const team = await post(`/api/v1/rbac/organizations/${org}/teams`, { name: 'pg-team' });
    const role = await post(`/api/v1/rbac/teams/${team}/roles`, { name: 'mydb-cpu', database_pattern: 'mydb', permissions: ['read'] });
    await post(`/api/v1/rbac/roles/${role}/measurements`, { measurement_pattern: 'cpu', permissions: ['read'] });
    await json(server, 'POST', `/api/v1/rbac/teams/${team}/members`, { token_id: id });
    const c = await client(token);
    try {
      expect((await c.query('SELECT count(*)::INTEGER AS n FROM cpu')).rows).toEqual([{ n: 3 }]);
      expect(await c.query('SELECT * FROM other.mem').catch((e: { code: string }) => e.code)).toBe('42501');
      const tables = await c.query("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1, 2");
      expect(tables.rows).toEqual([{ table_schema: 'mydb', table_name: 'cpu' }]);
      // Database listings name only what the token may read, like SHOW DATABASES.
      for (const sql of [
        'SELECT schema_name AS name FROM information_schema.schemata',
        'SELECT nspname AS name FROM pg_catalog.pg_namespace',
        'SELECT datname AS name FROM pg_catalog.pg_database',
        'SELECT DISTINCT table_schema AS name FROM information_schema.columns',
        'SHOW DATABASES',
      ])
        expect({ sql, rows: (await c.query(sql)).rows }).toEqual({ sql, rows: [{ name: 'mydb' }] });
    } finally {
      await c.end();
    }
  });
});

describe('pgwire in the audit log', () => {
  test('logins (refused and accepted, with the user name) and statements (include_reads) are audited like HTTP requests', async () => {
    const bad = await psql(['-c', 'SELECT 1'], 'svc_not_a_token');
    expect(bad.code).not.toBe(0);
    const ok = await psql(['-c', 'SELECT count(*) FROM cpu']);
    expect(ok.code).toBe(0);
    type Event = { action: string; status: number; database: string | null; token_name: string | null; detail: Record<string, string> };
    let events: Event[] = [];
    // Audit events are written in batches every 100 ms: a bounded wait for the three of this test.
    for (let i = 0; i < 50; i++) {
      const r = await json(server, 'GET', '/api/v1/audit/logs?limit=1000');
      events = ((r.body as { events: Event[] }).events ?? []).filter((e) => e.detail?.service === 'pgwire' && e.detail.user === 'dashboards');
      if (events.some((e) => e.action === 'query.run')) break;
      await Bun.sleep(100);
    }
    expect(events.find((e) => e.action === 'pgwire.login' && e.status === 401)).toMatchObject({ token_name: null, database: 'mydb' });
    expect(events.find((e) => e.action === 'pgwire.login' && e.status === 200)).toMatchObject({ token_name: 'admin', database: 'mydb' });
    expect(events.find((e) => e.action === 'query.run')).toMatchObject({ status: 200, token_name: 'admin', database: 'mydb' });
  });
});

describe('pgwire with the pg client', () => {
  test('wrong token -> SQLSTATE 28P01', async () => {
    const err = await client('svc_wrong_token_value_0123456789abcdefghij').then(
      (c) => c.end().then(() => null),
      (e: { code?: string }) => e,
    );
    expect(err?.code).toBe('28P01');
  });

  test('extended protocol: parameters (typed and untyped), prepared statements, text and binary results', async () => {
    const c = await client();
    try {
      const text = await c.query('SELECT host, usage, n, ok, time FROM cpu WHERE host = $1 AND n > $2 ORDER BY time', ['a', 3]);
      expect(text.rows).toEqual([{ host: 'a', usage: 3.5, n: '5', ok: true, time: new Date(1700000120000) }]);
      expect(text.fields.map((f) => f.dataTypeID)).toEqual([25, 701, 20, 16, 1184]);
      const prepared = { name: 'by_host', text: 'SELECT count(*) AS c FROM cpu WHERE host = $1' };
      expect((await c.query({ ...prepared, values: ['a'] })).rows).toEqual([{ c: '2' }]);
      expect((await c.query({ ...prepared, values: ['b'] })).rows).toEqual([{ c: '1' }]);
      const b = await client(ADMIN_TOKEN, 'mydb', true);
      // pg's parser reads binary DataRows through a UTF-8 string, so bytes >= 0x80 (a timestamp's) do
      // not survive it: timestamps and large integers in binary are checked against pg-types' decoders
      // in src/pgwire/pg-types.test.ts instead.
      const binary = await b.query('SELECT usage, n, ok, host, 7::SMALLINT AS s, 8::INTEGER AS i, CAST(1.25 AS DECIMAL(10,2)) AS d FROM cpu WHERE time >= $1 ORDER BY time', [new Date(1700000060000)]);
      await b.end();
      expect(binary.fields.every((f) => f.format === 'binary')).toBe(true);
      expect(binary.rows.map(({ s, i, d, ...rest }) => (expect([s, i, d]).toEqual([7, 8, 1.25]), rest))).toEqual([
        { usage: 2.5, n: '4', ok: false, host: 'b' },
        { usage: 3.5, n: '5', ok: true, host: 'a' },
      ]);
      const nulls = await c.query('SELECT $1::VARCHAR AS v, $2::BIGINT + 1 AS w', [null, 41]);
      expect(nulls.rows).toEqual([{ v: null, w: '42' }]);
    } finally {
      await c.end();
    }
  });

  test('session statements: BEGIN/COMMIT, SET/SHOW, an empty query', async () => {
    const c = await client();
    try {
      expect((await c.query('BEGIN')).command).toBe('BEGIN');
      expect((await c.query('SET TIME ZONE UTC')).command).toBe('SET');
      expect((await c.query('SHOW timezone')).rows).toEqual([{ timezone: 'UTC' }]);
      expect((await c.query('COMMIT')).command).toBe('COMMIT');
      expect((await c.query('-- ping')).rows).toEqual([]);
      await expect(c.query('SELECT * FROM no_such_function_here()')).rejects.toThrow(/not allowed/);
      // The connection stays usable after an error.
      expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await c.end();
    }
  });

  test('a cancel request stops the running statement (SQLSTATE 57014)', async () => {
    const c = await client();
    try {
      const running = c.query('SELECT sum(x) FROM range(1000000000000) t(x)').then(
        () => null,
        (e: { code?: string }) => e,
      );
      const { processID, secretKey } = c as unknown as { processID: number; secretKey: number };
      let settled: { code?: string } | null | undefined;
      void running.then((e) => (settled = e));
      // The request may land before the statement starts: repeat it until the query ends (bounded).
      for (let i = 0; i < 100 && settled === undefined; i++) {
        await sendCancel(processID, secretKey);
        await Bun.sleep(100);
      }
      expect((await running)?.code).toBe('57014');
      expect((await c.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    } finally {
      await c.end();
    }
  });

  test('tokens created or rotated after the upgrade log in with SCRAM; read permission is required', async () => {
    const created = await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-reader', permissions: ['read'] });
    expect(created.status).toBe(201);
    const { token, id } = created.body as { token: string; id: string };
    const c = await client(token);
    expect((await c.query('SELECT count(*)::INTEGER AS n FROM cpu')).rows).toEqual([{ n: 3 }]);
    await c.end();
    const rotated = await json(server, 'POST', `/api/v1/auth/tokens/${id}/rotate`);
    await expect(client(token)).rejects.toMatchObject({ code: '28P01' });
    await (await client((rotated.body as { token: string }).token)).end();
    const writer = await json(server, 'POST', '/api/v1/auth/tokens', { name: 'pg-writer', permissions: ['write'] });
    await expect(client((writer.body as { token: string }).token)).rejects.toMatchObject({ code: '42501' });
  });
});

describe("Grafana's PostgreSQL data source statements", () => {
  test('version, TimescaleDB probe, schema/table/column listings, a $__timeGroup query, ping', async () => {
    const c = await client();
    const run = (text: string) => c.query({ text, queryMode: 'extended' } as pg.QueryConfig);
    try {
      expect((await run("SELECT current_setting('server_version_num')::int/100 as version")).rows).toEqual([{ version: 1400 }]);
      expect((await run("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")).rows).toEqual([]);
      const schemas = await run(`SELECT schema_name AS "name" FROM information_schema.schemata
        WHERE schema_name NOT IN ('information_schema', 'pg_catalog', 'pg_toast', '_timescaledb_cache') ORDER BY schema_name`);
      expect(schemas.rows.map((r) => r.name)).toEqual(['mydb', 'other']);
      const searchPath = `quote_ident(table_schema) IN (SELECT CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM generate_series(array_lower(string_to_array(current_setting('search_path'),','),1),
                               array_upper(string_to_array(current_setting('search_path'),','),1)) as i,
               string_to_array(current_setting('search_path'),',') s)`;
      const tables = await run(`SELECT CASE WHEN ${searchPath} THEN quote_ident(table_name) ELSE quote_ident(table_schema) || '.' || quote_ident(table_name) END AS "table"
        FROM information_schema.tables WHERE quote_ident(table_schema) NOT IN ('information_schema', 'pg_catalog') ORDER BY CASE WHEN ${searchPath} THEN 0 ELSE 1 END, 1`);
      expect(tables.rows.map((r) => r.table)).toEqual(['cpu', 'other.mem']);
      const columns = await run(`SELECT quote_ident(column_name) AS "column", data_type AS "type" FROM information_schema.columns
        WHERE CASE WHEN array_length(parse_ident('cpu'),1) = 2 THEN quote_ident(table_schema) = (parse_ident('cpu'))[1] AND quote_ident(table_name) = (parse_ident('cpu'))[2]
              ELSE quote_ident(table_name) = 'cpu' AND ${searchPath} END`);
      expect(columns.rows).toEqual([
        { column: 'time', type: 'timestamp with time zone' },
        { column: 'host', type: 'text' },
        { column: 'usage', type: 'double precision' },
        { column: 'n', type: 'bigint' },
        { column: 'ok', type: 'boolean' },
      ]);
      const series = await run(`SELECT floor(extract(epoch from time)/120)*120 AS "time", avg(usage) AS "usage" FROM cpu
        WHERE time BETWEEN '2023-11-14T22:00:00Z' AND '2023-11-14T23:00:00.000Z' GROUP BY 1 ORDER BY 1`);
      expect(series.rows).toEqual([{ time: 1699999920, usage: 1.5 }, { time: 1700000040, usage: 3 }]);
      expect((await c.query('-- ping')).rows).toEqual([]);
    } finally {
      await c.end();
    }
  });
});

describe('pgwire over TLS (the server certificate)', () => {
  test('sslmode=require works; a token without a SCRAM verifier (made before the upgrade) logs in only over TLS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pgtls-'));
    const gen = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=127.0.0.1'], { cwd: dir });
    expect(gen.exitCode).toBe(0);
    const tls = await startServer({
      dir,
      env: {
        SVC_PGWIRE_ENABLED: 'true', SVC_PGWIRE_PORT: '0', SVC_PGWIRE_HOST: '127.0.0.1', SVC_MEMORY_ENABLED: 'false',
        SVC_SERVER_TLS_ENABLED: 'true', SVC_SERVER_TLS_CERT_FILE: join(dir, 'cert.pem'), SVC_SERVER_TLS_KEY_FILE: join(dir, 'key.pem'),
      },
    });
    try {
      const tlsPort = Number(/pgwire_port"?[=:](\d+)/.exec(tls.output())![1]);
      const created = await json(tls, 'POST', '/api/v1/auth/tokens', { name: 'legacy' });
      const legacy = (created.body as { token: string }).token;
      // What a token created before migration 0009 looks like: no verifier.
      const db = new Database(join(dir, 'data', 'svc.db'));
      db.run("UPDATE tokens SET scram_verifier = NULL WHERE name = 'legacy'");
      db.close();
      const run = async (sslmode: string, password: string) => {
        const proc = Bun.spawn([PSQL, `host=127.0.0.1 port=${tlsPort} user=legacy dbname=mydb sslmode=${sslmode}`, '-X', '-A', '-t', '-c', 'SELECT 40 + 2'], {
          env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '10' }, stdout: 'pipe', stderr: 'pipe',
        });
        return { code: await proc.exited, out: (await new Response(proc.stdout).text()).trim(), err: await new Response(proc.stderr).text() };
      };
      expect(await run('require', legacy)).toMatchObject({ code: 0, out: '42' });
      expect(await run('require', ADMIN_TOKEN)).toMatchObject({ code: 0, out: '42' });
      const plain = await run('disable', legacy);
      expect(plain.code).not.toBe(0);
      expect(plain.err).toContain('password authentication failed');
      expect(await run('disable', ADMIN_TOKEN)).toMatchObject({ code: 0, out: '42' });
      expect((await run('require', 'svc_wrong')).err).toContain('password authentication failed');
    } finally {
      await tls.cleanup();
    }
  });
});

describe('pgwire protocol messages (a raw client, as pgx sends them)', () => {
  test('Describe of a statement before Bind, binary parameters and results, row limits with PortalSuspended', async () => {
    const open = await startServer({ env: { SVC_PGWIRE_ENABLED: 'true', SVC_PGWIRE_PORT: '0', SVC_PGWIRE_HOST: '127.0.0.1', SVC_MEMORY_ENABLED: 'false', SVC_AUTH_ENABLED: 'false' } });
    try {
      const lp = ['cpu,host=a n=3i 1700000000000000000', 'cpu,host=b n=4i 1700000060000000000', 'cpu,host=a n=5i 1700000120000000000'];
      expect((await open.fetch('/write?db=mydb', { method: 'POST', body: lp.join('\n') })).status).toBe(204);
      const raw = await RawClient.connect(Number(/pgwire_port"?[=:](\d+)/.exec(open.output())![1]));
      const int8 = (n: bigint) => {
        const b = Buffer.alloc(8);
        b.writeBigInt64BE(n);
        return b;
      };
      raw.send('P', Buffer.concat([cstr('s1'), cstr('SELECT host, n FROM cpu WHERE n >= $1 ORDER BY time'), i16(1), i32(20)]));
      raw.send('D', Buffer.concat([Buffer.from('S'), cstr('s1')]));
      raw.send('S', Buffer.alloc(0));
      const described = await raw.until('Z');
      expect(described.map((m) => m.type)).toEqual(['1', 't', 'T', 'Z']);
      expect(described[1]!.body.readInt16BE(0)).toBe(1);
      expect(described[1]!.body.readInt32BE(2)).toBe(20);
      const fields = described[2]!.body;
      expect(fields.readInt16BE(0)).toBe(2);
      // Bind: one binary int8 parameter, binary results; Execute at most 1 row, then the rest.
      raw.send('B', Buffer.concat([cstr(''), cstr('s1'), i16(1), i16(1), i16(1), i32(8), int8(4n), i16(1), i16(1)]));
      raw.send('E', Buffer.concat([cstr(''), i32(1)]));
      raw.send('E', Buffer.concat([cstr(''), i32(0)]));
      raw.send('S', Buffer.alloc(0));
      const run = await raw.until('Z');
      expect(run.map((m) => m.type)).toEqual(['2', 'D', 's', 'D', 'C', 'Z']);
      const row = (m: { body: Buffer }) => [m.body.subarray(6, 6 + m.body.readInt32BE(2)).toString(), m.body.readBigInt64BE(6 + m.body.readInt32BE(2) + 4)];
      expect([row(run[1]!), row(run[3]!)]).toEqual([['b', 4n], ['a', 5n]]);
      expect(run[4]!.body.toString()).toBe('SELECT 2\0');
      // Describe does not run the statement: one that fails only when it runs (a cast of 'a' to an
      // integer) is described, and fails at Execute.
      raw.send('P', Buffer.concat([cstr('s2'), cstr('SELECT CAST(host AS INTEGER) AS h FROM cpu'), i16(0)]));
      raw.send('D', Buffer.concat([Buffer.from('S'), cstr('s2')]));
      raw.send('S', Buffer.alloc(0));
      const onlyDescribed = await raw.until('Z');
      expect(onlyDescribed.map((m) => m.type)).toEqual(['1', 't', 'T', 'Z']);
      expect(onlyDescribed[2]!.body.readInt16BE(0)).toBe(1);
      expect(onlyDescribed[2]!.body.subarray(2, 4).toString()).toBe('h\0');
      raw.send('B', Buffer.concat([cstr(''), cstr('s2'), i16(0), i16(0), i16(0)]));
      raw.send('E', Buffer.concat([cstr(''), i32(0)]));
      raw.send('S', Buffer.alloc(0));
      const failedRun = await raw.until('Z');
      expect(failedRun.map((m) => m.type)).toContain('E');
      raw.close();
    } finally {
      await open.cleanup();
    }
  });
});

const cstr = (s: string) => Buffer.from(`${s}\0`);
const i16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** A minimal protocol 3.0 client: sends typed messages, collects replies, knows when the server closed. */
class RawClient {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  /** True once the server closed the connection; false if it is still open after a generous minute. */
  readonly closed: Promise<boolean>;
  private constructor(private readonly socket: import('node:net').Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiting?.();
    });
    socket.on('error', () => {});
    this.closed = new Promise((r) => {
      socket.once('close', () => r(true));
      setTimeout(() => r(false), 60_000).unref();
    });
  }
  /** A connection that has sent nothing yet. */
  static async open(p = port): Promise<RawClient> {
    const socket = connect(p, '127.0.0.1');
    await new Promise((r, j) => socket.once('connect', r).once('error', j));
    return new RawClient(socket);
  }
  /** Logs in to an auth-less server. */
  static async connect(p: number): Promise<RawClient> {
    const c = await RawClient.open(p);
    c.startup('raw', 'mydb');
    await c.until('Z');
    return c;
  }
  startup(user: string, database: string): void {
    const params = Buffer.concat([cstr('user'), cstr(user), cstr('database'), cstr(database), Buffer.from([0])]);
    this.socket.write(Buffer.concat([i32(8 + params.length), i32(196608), params]));
  }
  send(type: string, body: Buffer): void {
    this.socket.write(Buffer.concat([Buffer.from(type), i32(body.length + 4), body]));
  }
  /** Messages up to and including the first of `type` (bounded wait). */
  async until(type: string): Promise<{ type: string; body: Buffer }[]> {
    const out: { type: string; body: Buffer }[] = [];
    const deadline = Date.now() + 30_000;
    for (;;) {
      while (this.buf.length >= 5 && this.buf.length >= 1 + this.buf.readInt32BE(1)) {
        const len = this.buf.readInt32BE(1);
        const m = { type: String.fromCharCode(this.buf[0]!), body: this.buf.subarray(5, 1 + len) };
        this.buf = this.buf.subarray(1 + len);
        out.push(m);
        if (m.type === type) return out;
      }
      if (Date.now() > deadline) throw new Error(`no '${type}' message; got ${out.map((m) => m.type).join(',')}`);
      await new Promise<void>((r) => {
        this.waiting = r;
        setTimeout(r, 100);
      });
    }
  }
  close(): void {
    this.socket.end();
  }
}

/** The fields of an ErrorResponse: S (severity), C (SQLSTATE), M (message), ... */
function errorFields(m: { body: Buffer } | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (let at = 0; m && at < m.body.length && m.body[at] !== 0; ) {
    const end = m.body.indexOf(0, at + 1);
    out[String.fromCharCode(m.body[at]!)] = m.body.subarray(at + 1, end).toString();
    at = end + 1;
  }
  return out;
}

/** Sends a Postgres CancelRequest on a new connection. */
function sendCancel(pid: number, secret: number): Promise<void> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      const b = Buffer.alloc(16);
      b.writeInt32BE(16, 0);
      b.writeInt32BE(80877102, 4);
      b.writeInt32BE(pid, 8);
      b.writeInt32BE(secret, 12);
      s.end(b);
    });
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
}
