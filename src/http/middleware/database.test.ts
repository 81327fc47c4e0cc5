import { expect, test } from 'bun:test';
import { Hono } from 'hono';
import { AppError } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';
import { database, DATABASE_RULES, type DatabaseRule } from './database.ts';

/** The database `rule` resolves for `path` (+ header), or the error status and message. */
async function resolve(rule: DatabaseRule, path: string, header?: string): Promise<string> {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => c.text(`${(err as AppError).status} ${err.message}`));
  app.get('/x', database(rule), (c) => c.text(c.var.database ?? '(none)'));
  const res = await app.request(path, { headers: header ? { 'x-svc-database': header } : {} });
  return res.text();
}

test('each route kind resolves its database by the spec rule', async () => {
  const r = DATABASE_RULES;
  expect(await resolve(r.influxV1Write, '/x?db=a', 'h')).toBe('a');
  expect(await resolve(r.influxV1Write, '/x', 'h')).toBe('h');
  expect(await resolve(r.influxV1Write, '/x')).toStartWith('400 database is required: pass ?db=<database> or the x-svc-database header');
  expect(await resolve(r.influxV2Write, '/x?bucket=a/autogen')).toBe('a');
  expect(await resolve(r.influxV2Write, '/x?bucket=', 'h')).toBe('h');
  expect(await resolve(r.nativeWrite, '/x?db=ignored')).toBe('default');
  expect(await resolve(r.nativeWrite, '/x', 'h')).toBe('h');
  expect(await resolve(r.importWrite, '/x?db=a', 'h')).toBe('a');
  expect(await resolve(r.importWrite, '/x')).toBe('default');
  expect(await resolve(r.query, '/x')).toBe('(none)');
  expect(await resolve(r.measurementRead, '/x?database=a&db=b', 'h')).toBe('a');
  expect(await resolve(r.measurementList, '/x', 'h')).toBe('(none)');
});

test('write rules check the name before any work; read rules leave that to the query', async () => {
  expect(await resolve(DATABASE_RULES.nativeWrite, '/x', 'bad name')).toStartWith("400 invalid database name 'bad name'");
  expect(await resolve(DATABASE_RULES.influxV1Write, '/x?db=system')).toContain('reserved');
  expect(await resolve(DATABASE_RULES.query, '/x', 'system')).toBe('system');
});
