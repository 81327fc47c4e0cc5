import { z } from 'zod';
import { bool, duration, int, size } from '../fields.ts';

/** [query] and [database]: the SQL engine. */
export const querySection = z.object({
  timeout: duration('300s', 'Longest a query may run (0 disables); cancelled queries answer 504'),
  slow_query_threshold_ms: int(0, 'Log and count queries slower than this (0 disables)'),
  max_concurrent: int(0, 'Queries run at once (0: number of cores)'),
  whole_body_memory: size('256MB', 'Query result bodies built whole and sent with Content-Length while all being built at once fit in this much memory; a larger body streams chunked (empty: only bodies under 256 KB are sent whole)', true),
  native_encoders: bool(true, 'Read results, write JSON and decode remote-write snappy bodies with C compiled at start (same bytes as the TypeScript path; false: TypeScript only)'),
});

/** [database]: DuckDB resources. */
export const databaseSection = z.object({
  memory_limit: size('', 'DuckDB memory limit (empty: DuckDB default, 80% of RAM)', true),
  threads: int(0, 'DuckDB threads (0: number of cores)'),
});
