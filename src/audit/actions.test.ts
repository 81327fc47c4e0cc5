import { expect, test } from 'bun:test';
import { actionOf } from './actions.ts';

test('actions name the operation users search for', () => {
  const cases: [string, string, string, string | null][] = [
    ['POST', '/api/v1/auth/tokens', 'token.create', null],
    ['PATCH', '/api/v1/auth/tokens/abc', 'token.update', 'abc'],
    ['DELETE', '/api/v1/auth/tokens/abc', 'token.delete', 'abc'],
    ['POST', '/api/v1/auth/tokens/abc/rotate', 'token.rotate', 'abc'],
    ['POST', '/api/v1/auth/cache/invalidate', 'token_cache.invalidate', null],
    ['POST', '/api/v1/databases', 'database.create', null],
    ['DELETE', '/api/v1/databases/prod', 'database.delete', 'prod'],
    ['DELETE', '/api/v1/queries/q_1', 'query.cancel', 'q_1'],
    ['POST', '/api/v1/retention/3/execute', 'retention.apply', '3'],
    ['POST', '/api/v1/continuous_queries/3/execute', 'continuous_query.apply', '3'],
    ['PUT', '/api/v1/governance/policies/gp_1', 'governance.policy.update', 'gp_1'],
    ['POST', '/api/v1/mqtt/subscriptions/s1/start', 'mqtt.subscription.start', 's1'],
    ['POST', '/api/v1/compaction/trigger', 'compaction.trigger', null],
    ['POST', '/api/v1/tiering/migrate', 'tiering.migrate', null],
    ['POST', '/api/v1/tiering/policies', 'tiering.policy.create', null],
    ['DELETE', '/api/v1/tiering/policies/tp_1', 'tiering.policy.delete', 'tp_1'],
    ['POST', '/api/v1/write/msgpack', 'data.write', null],
    ['POST', '/write', 'data.write', null],
    ['POST', '/api/v2/write', 'data.write', null],
    ['POST', '/api/v1/query', 'query.run', null],
    ['POST', '/api/v1/query/estimate', 'query.estimate', null],
    ['POST', '/api/v1/delete', 'data.delete', null],
    ['POST', '/api/v1/backup/restore', 'backup.restore', null],
    ['GET', '/api/v1/databases', 'database.read', null],
    ['POST', '/api/v1/memories', 'memory.create', null],
    ['DELETE', '/api/v1/keys/k1', 'api_key.delete', 'k1'],
  ];
  for (const [method, path, action, target] of cases) expect([method, path, actionOf(method, path)]).toEqual([method, path, { action, target }]);
});
