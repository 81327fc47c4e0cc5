/**
 * Which node handles a request in a cluster: writers take everything that changes rows (writes,
 * imports, deletes, database drops, MQTT subscriptions, which ingest), the active compactor takes the
 * runs of the singletons (compaction, retention and continuous-query executions, tiering migrations,
 * whose jobs and status it alone knows), and a compactor
 * hands queries to a reader. Everything else (metadata reads and changes, which are replicated) is
 * answered where it arrives.
 */
import type { Role } from './node-record.ts';

/** Where a request goes: here, or to the active writer, the active compactor or some reader. */
export type Destination = 'local' | 'writer' | 'compactor' | 'reader';

const SINGLETON_RUN = /^\/api\/v1\/(compaction\/(trigger|hourly|daily)|retention\/[^/]+\/execute|continuous[_-]queries\/[^/]+\/execute|tiering\/migrate)$/;
/** Reads only the active compactor can answer: the tiering jobs it runs. */
const SINGLETON_STATE = /^\/api\/v1\/tiering\/(status|jobs\/[^/]+)$/;

/** The destination of `method path` (route `group` as the metrics name it) on a node of `role` that `leads` its role or not. */
export function destinationOf(role: Role, leads: boolean, group: string, method: string, path: string): Destination {
  if (role === 'standalone') return 'local';
  const reads = method === 'GET' || method === 'HEAD';
  const ingest = !reads && (group === 'write' || group === 'import' || group === 'delete' || group === 'mqtt' || (group === 'databases' && method === 'DELETE'));
  if (ingest) return role === 'writer' && leads ? 'local' : 'writer';
  if ((!reads && SINGLETON_RUN.test(path)) || (reads && SINGLETON_STATE.test(path))) return role === 'compactor' && leads ? 'local' : 'compactor';
  if (group === 'query' && role === 'compactor') return 'reader';
  return 'local';
}
