/**
 * The audit action of a request, from its method and path alone: `<resource>.<verb>`, where the
 * verb is the route's own (rotate, execute, start) or create/update/delete/read by method. Known
 * operations get the names users search for (token.create, query.cancel, retention.apply).
 */

/** Resource names by the path's first segment after the API prefix. */
const RESOURCES: Record<string, string> = {
  auth: 'token',
  databases: 'database',
  queries: 'query',
  query: 'query',
  retention: 'retention',
  continuous_queries: 'continuous_query',
  'continuous-queries': 'continuous_query',
  compaction: 'compaction',
  backup: 'backup',
  mqtt: 'mqtt.subscription',
  governance: 'governance',
  audit: 'audit',
  delete: 'data',
  write: 'data',
  import: 'data',
  wal: 'wal',
  memories: 'memory',
  search: 'memory',
  agents: 'agent',
  sessions: 'session',
  keys: 'api_key',
  logs: 'logs',
  metrics: 'metrics',
  measurements: 'measurement',
};

/** Route verbs that name the operation better than the method. */
const ROUTE_VERBS: Record<string, string> = { execute: 'apply', invalidate: 'invalidate', cleanup: 'cleanup', context: 'context', flush: 'flush' };

const METHOD_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/** The action and what the path names (an id or name), for an audit event. */
export function actionOf(method: string, path: string): { action: string; target: string | null } {
  const segs = path.split('/').filter(Boolean);
  if (segs[0] === 'write' || (segs[0] === 'api' && segs[2] === 'write')) return { action: 'data.write', target: null };
  const rest = segs[0] === 'api' ? segs.slice(/^v\d+$/.test(segs[1] ?? '') ? 2 : 1) : segs;
  const head = rest[0] ?? '';
  if (head === '') return { action: `service.${verb(method)}`, target: null };
  let resource = RESOURCES[head] ?? head.replace(/-/g, '_');
  let tail = rest.slice(1);
  // Sub-collections: /auth/tokens, /governance/policies, /mqtt/subscriptions, /auth/cache.
  if (head === 'auth' && tail[0] === 'cache') (resource = 'token_cache'), (tail = tail.slice(1));
  else if ((head === 'auth' || head === 'governance' || head === 'mqtt') && tail.length > 0) {
    if (head === 'governance') resource = tail[0] === 'policies' ? 'governance.policy' : `governance.${tail[0]}`;
    tail = tail.slice(1);
  } else if (head === 'tiering' && tail[0] === 'policies') (resource = 'tiering.policy'), (tail = tail.slice(1));
  if (head === 'query' || head === 'queries') return queryAction(head, method, tail);
  if (head === 'import') return { action: 'data.import', target: tail[0] ?? null };
  if (head === 'delete') return { action: 'data.delete', target: null };
  const target = tail[0] ?? null;
  const routeVerb = tail.length >= 2 ? tail[tail.length - 1]! : tail.length === 1 && !isId(tail[0]!) ? tail[0]! : null;
  if (routeVerb && method !== 'GET') return { action: `${resource}.${ROUTE_VERBS[routeVerb] ?? routeVerb}`, target: tail.length >= 2 ? target : null };
  return { action: `${resource}.${verb(method)}`, target };
}

function queryAction(head: string, method: string, tail: string[]): { action: string; target: string | null } {
  if (head === 'queries') {
    if (method === 'DELETE') return { action: 'query.cancel', target: tail[0] ?? null };
    return { action: tail[0] === 'history' ? 'query.history' : tail[0] === 'active' ? 'query.active' : 'query.read', target: tail[0] && !['history', 'active'].includes(tail[0]) ? tail[0] : null };
  }
  if (tail[0] === 'estimate') return { action: 'query.estimate', target: null };
  if (method === 'GET') return { action: 'query.measurement', target: tail[0] ?? null };
  return { action: 'query.run', target: null };
}

const verb = (method: string) => METHOD_VERBS[method] ?? 'read';

/** Ids and names vary; route words are lowercase words from a fixed set. */
const isId = (seg: string) => !/^[a-z]+$/.test(seg) || !KNOWN_WORDS.has(seg);
const KNOWN_WORDS = new Set(['trigger', 'hourly', 'daily', 'restore', 'cleanup', 'invalidate', 'flush', 'status', 'files', 'health', 'stats', 'logs', 'usage', 'active', 'history', 'context', 'migrate']);
