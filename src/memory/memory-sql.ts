/**
 * SQL text for every read of the memories measurement. Pure: filters in, one SELECT out. Every value
 * is a literal built by sql.ts; column and table names are constants. Each query is scoped by org_id
 * and leaves out forgotten (tombstoned) memories.
 */
import { SELECT_COLUMNS } from './memory-record.ts';
import { sqlNumber, sqlString, sqlStringList, sqlTime } from './sql.ts';

/** The measurement holding memories (bare name: the database travels in `x-svc-database`). */
export const MEMORY_TABLE = 'memories';

/** Structured filters shared by list, search, context, dedup and stats. */
export interface MemoryFilter {
  orgId: string;
  memoryId?: string;
  agentId?: string;
  sessionId?: string;
  memoryTypes?: readonly string[];
  excludeTypes?: readonly string[];
  eventTypes?: readonly string[];
  /** All must match exactly. */
  tags?: readonly string[];
  /** Case-insensitive substring of content. */
  contentContains?: string;
  minImportance?: number;
  maxImportance?: number;
  /** Inclusive bounds, epoch microseconds. */
  sinceUs?: number;
  untilUs?: number;
  dedupKeys?: readonly string[];
  /** Forgotten memory ids to leave out. */
  excludeIds?: readonly string[];
  parentId?: string;
  /** Exact match on top-level metadata keys (string, number or boolean values). */
  metadata?: Readonly<Record<string, MetadataValue>>;
  /** Leave out memories expired at this instant (epoch µs); reads pass now. */
  aliveAtUs?: number;
  /**
   * True when superseded versions exist (see version-state.ts): only then does the filter add the
   * newest-version condition. History and purges leave it unset to see every version.
   */
  latestOnly?: boolean;
}

/** A value a metadata filter can match exactly. */
export type MetadataValue = string | number | boolean;

/** The JSON path of a top-level metadata key (keys are validated at the boundary: no quotes). */
export function metadataPath(key: string): string {
  return `$."${key}"`;
}

/** Order and page of a SELECT. */
export interface Page {
  order: 'asc' | 'desc';
  limit: number;
  offset?: number;
}

/** The WHERE conditions of a filter, joined with AND. */
export function whereClause(f: MemoryFilter): string {
  const c: string[] = [`org_id = ${sqlString(f.orgId)}`];
  if (f.memoryId !== undefined) c.push(`memory_id = ${sqlString(f.memoryId)}`);
  if (f.agentId !== undefined) c.push(`agent_id = ${sqlString(f.agentId)}`);
  if (f.sessionId !== undefined) c.push(`session_id = ${sqlString(f.sessionId)}`);
  if (f.memoryTypes?.length) c.push(`memory_type IN (${sqlStringList(f.memoryTypes)})`);
  if (f.excludeTypes?.length) c.push(`memory_type NOT IN (${sqlStringList(f.excludeTypes)})`);
  if (f.eventTypes?.length) c.push(`event_type IN (${sqlStringList(f.eventTypes)})`);
  for (const tag of f.tags ?? []) c.push(`contains(tags, ${sqlString(`,${tag},`)})`);
  if (f.contentContains !== undefined) c.push(`contains(lower(content), lower(${sqlString(f.contentContains)}))`);
  if (f.minImportance !== undefined) c.push(`importance >= ${sqlNumber(f.minImportance)}`);
  if (f.maxImportance !== undefined) c.push(`importance <= ${sqlNumber(f.maxImportance)}`);
  if (f.sinceUs !== undefined) c.push(`time >= ${sqlTime(f.sinceUs)}`);
  if (f.untilUs !== undefined) c.push(`time <= ${sqlTime(f.untilUs)}`);
  if (f.dedupKeys?.length) c.push(`dedup_key IN (${sqlStringList(f.dedupKeys)})`);
  if (f.excludeIds?.length) c.push(`memory_id NOT IN (${idListSql(f.excludeIds)})`);
  if (f.parentId !== undefined) c.push(`parent_id = ${sqlString(f.parentId)}`);
  for (const [key, value] of Object.entries(f.metadata ?? {})) {
    const path = sqlString(metadataPath(key));
    if (typeof value === 'string') c.push(`json_extract_string(nullif(metadata, ''), ${path}) = ${sqlString(value)}`);
    else c.push(`json_extract(nullif(metadata, ''), ${path}) = ${sqlString(JSON.stringify(value))}::JSON`);
  }
  if (f.aliveAtUs !== undefined) c.push(`(coalesce(expires_at, 0) = 0 OR expires_at > ${sqlNumber(f.aliveAtUs)})`);
  if (f.latestOnly) c.push(latestOnlySql());
  return c.join(' AND ');
}

/**
 * A subquery yielding `ids`, for the forgotten ids a read leaves out (there may be tens of thousands).
 * They travel as one JSON string literal: a literal `IN ('a', 'b', ...)` list costs our parser, guard
 * and rewrite one syntax-tree node per id and DuckDB a per-row scan of the list (60,000 ids: 10-16 s
 * per read), while one literal is parsed once and the subquery runs as a hash anti-join (~0.2 s).
 * JSON keeps every id exact, whatever characters it holds.
 */
export function idListSql(ids: readonly string[]): string {
  return `SELECT unnest(from_json(${sqlString(JSON.stringify(ids))}, '["VARCHAR"]'))`;
}

/**
 * The condition keeping only each memory's newest version. Superseded versions stay in storage as
 * history. Versions of a memory are consecutive (1, 2, ...), so a row is superseded exactly when the
 * next version exists; the subquery reads only rows of patched memories (version > 1), which
 * row-group statistics let the engine skip, and is not correlated, so it runs once as a hash anti-join.
 */
export function latestOnlySql(): string {
  return `(memory_id || '#' || (coalesce(version, 1) + 1)) NOT IN (SELECT memory_id || '#' || version FROM ${MEMORY_TABLE} WHERE version > 1)`;
}

/** SELECT of full memories, ordered by time (ties by memory_id) and paged. */
export function selectMemoriesSql(f: MemoryFilter, page: Page): string {
  const dir = page.order === 'asc' ? 'ASC' : 'DESC';
  const offset = page.offset ? ` OFFSET ${sqlNumber(page.offset)}` : '';
  return `SELECT ${SELECT_COLUMNS} FROM ${MEMORY_TABLE} WHERE ${whereClause(f)} ORDER BY time ${dir}, memory_id ${dir} LIMIT ${sqlNumber(page.limit)}${offset}`;
}

/** The newest memory per dedup key among `f` (which carries dedupKeys and the window start). */
export function dedupSql(f: MemoryFilter): string {
  return `SELECT dedup_key, memory_id FROM ${MEMORY_TABLE} WHERE ${whereClause(f)} ORDER BY time DESC`;
}

/** Per memory_type: total, since `recentUs`, and errors (event_type `error`) since `recentUs`. */
export function statsSql(f: MemoryFilter, recentUs: number): string {
  const recent = `time >= ${sqlTime(recentUs)}`;
  return (
    `SELECT memory_type, count(*) AS total, count(*) FILTER (WHERE ${recent}) AS recent, ` +
    `count(*) FILTER (WHERE ${recent} AND event_type = 'error') AS errors ` +
    `FROM ${MEMORY_TABLE} WHERE ${whereClause(f)} GROUP BY memory_type`
  );
}
