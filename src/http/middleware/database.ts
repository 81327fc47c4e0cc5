/**
 * The database of a request, resolved in one place. Each route names its rule: where to look, in
 * order (the `x-svc-database` header, the `db` or `database` query parameter, the 2.x `bucket`), and
 * what happens when none is given (the spec's `default`, a 400, or no database at all).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { invalid } from '../../lib/errors.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import type { AppEnv } from '../context.ts';

/** A place a database name may come from. */
export type DatabaseSource = 'header' | 'db' | 'database' | 'bucket';

/** Where a route looks for its database and what it does when none is given. */
export interface DatabaseRule {
  from: readonly DatabaseSource[];
  otherwise: 'default' | 'required' | 'optional';
  /** Write routes check the name against the database naming rules before any work. */
  validate: boolean;
}

/** The rules of the spec, one per kind of route. */
export const DATABASE_RULES = {
  /** POST /write: `db`, which the header may replace. */
  influxV1Write: { from: ['db', 'header'], otherwise: 'required', validate: true },
  /** POST /api/v2/write: `bucket` (1.8-style `db/rp`; the retention policy is ignored), or the header. */
  influxV2Write: { from: ['bucket', 'header'], otherwise: 'required', validate: true },
  /** Native writes (MessagePack, line protocol): the header, else `default`. */
  nativeWrite: { from: ['header'], otherwise: 'default', validate: true },
  /** Imports and /api/v1/write/tle: `db`, else the header, else `default`. */
  importWrite: { from: ['db', 'header'], otherwise: 'default', validate: true },
  /** SQL queries: the header lets bare measurement names resolve; none is fine. */
  query: { from: ['header'], otherwise: 'optional', validate: false },
  /** GET /api/v1/query/:measurement: `database`, `db` or the header. */
  measurementRead: { from: ['database', 'db', 'header'], otherwise: 'required', validate: false },
  /** GET /api/v1/measurements: `db` (or `database`) narrows the list. */
  measurementList: { from: ['db', 'database'], otherwise: 'optional', validate: false },
} as const satisfies Record<string, DatabaseRule>;

const HOW_TO_PASS: Record<DatabaseSource, string> = {
  header: 'the x-svc-database header',
  db: '?db=<database>',
  database: '?database=<database>',
  bucket: '?bucket=<database>',
};

function lookup(c: Context<AppEnv>, source: DatabaseSource): string | undefined {
  if (source === 'header') return c.req.header('x-svc-database') || undefined;
  const value = c.req.query(source) || undefined;
  return source === 'bucket' ? value?.split('/')[0] || undefined : value;
}

/** The database `rule` finds in the request (validated when the rule says so), or undefined when optional. */
export function resolveDatabase(c: Context<AppEnv>, rule: DatabaseRule): string | undefined {
  let name: string | undefined;
  for (const source of rule.from) if ((name = lookup(c, source)) !== undefined) break;
  if (name === undefined) {
    if (rule.otherwise === 'default') name = 'default';
    else if (rule.otherwise === 'required') throw invalid(`database is required: pass ${rule.from.map((s) => HOW_TO_PASS[s]).join(' or ')}`);
    else return undefined;
  }
  return rule.validate ? assertDatabaseName(name) : name;
}

/** Sets `database` on the context by `rule`; handlers read `c.var.database`. */
export function database(rule: DatabaseRule): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('database', resolveDatabase(c, rule));
    await next();
  };
}
