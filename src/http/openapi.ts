/**
 * The OpenAPI 3.1 document of the time-series API, served at `GET /openapi.json` on the time-series
 * port: the catalog of its operations with the zod schemas the routes check, built by
 * lib/openapi.ts against the app's registered routes (a route added without documentation, or
 * documentation of a route that is gone, fails loudly instead of drifting).
 */
import { z } from 'zod';
import { candidatesQuery, createCqBody, createRetentionBody, createSubscriptionBody, historyQuery, restoreBody, triggerBody, updateCqBody, updateRetentionBody, updateSubscriptionBody } from '../admin/index.ts';
import { checkQuery, grantBody, grantPatch, memberBody, organizationBody, organizationPatch, roleBody, rolePatch, teamBody, teamPatch } from '../auth/index.ts';
import { createPolicyBody, updatePolicyBody } from '../governance/index.ts';
import { filesQuery as tieringFilesQuery, migrateBody, policyBody as tieringPolicyBody } from '../tiering/index.ts';
import { openApiDocument as buildDocument, type Operation, type Operations, type RegisteredRoute } from '../lib/openapi.ts';
import { logParams } from './routes/audit-routes.ts';
import { createBody as tokenCreateBody, patchBody as tokenPatchBody } from './routes/auth-routes.ts';
import { filesQuery, nodeFilter } from './routes/cluster-routes.ts';
import { executeBody as cqExecuteBody } from './routes/continuous-query-routes.ts';
import { createBody as databaseCreateBody } from './routes/database-routes.ts';
import { deleteBody } from './routes/delete-routes.ts';
import { exportBody } from './routes/export-routes.ts';
import { csvQuery, lpQuery, parquetQuery, tleQuery } from './routes/import-routes.ts';
import { precisionQuery } from './routes/ingest-route.ts';
import { historyParams as executionsQuery } from './routes/lifecycle-params.ts';
import { logsQuery } from './routes/logs-routes.ts';
import { timeseriesQuery } from './routes/metrics-routes.ts';
import { historyParams as queryHistoryQuery } from './routes/query-management-routes.ts';
import { measurementParams, queryBody } from './routes/query-routes.ts';
import { cleanupQuery } from './routes/wal-routes.ts';

const LINE_PROTOCOL = { mediaType: 'text/plain', description: 'InfluxDB line protocol, one point a line (gzip with Content-Encoding: gzip)' };
const lineProtocolWrite = (summary: string): Operation => ({ summary, rawBody: LINE_PROTOCOL, query: precisionQuery, ok: { 204: 'written: the points will be queryable' } });

/** The CRUD routes of a resource with numeric ids and executions (retention policies, continuous queries). */
function scheduledResource(base: string, what: string, create: z.ZodType, update: z.ZodType, execute?: z.ZodType): Record<string, Operation> {
  return {
    [`POST ${base}`]: { summary: `Create a ${what} (admin)`, body: create, ok: { 201: `the ${what}` } },
    [`GET ${base}`]: { summary: `List ${what}s`, ok: { 200: `the ${what}s and count` } },
    [`GET ${base}/:id`]: { summary: `One ${what}`, ok: { 200: `the ${what}` } },
    [`PUT ${base}/:id`]: { summary: `Change a ${what} (admin)`, body: update, ok: { 200: `the ${what}` } },
    [`DELETE ${base}/:id`]: { summary: `Delete a ${what} (admin)`, ok: { 200: 'deleted' } },
    [`POST ${base}/:id/execute`]: { summary: `Run a ${what} now (admin)`, ...(execute ? { body: execute } : {}), ok: { 200: 'the execution record' } },
    [`GET ${base}/:id/executions`]: { summary: `Past executions of a ${what}, newest first`, query: executionsQuery, ok: { 200: 'executions and count' } },
  };
}

/** Every operation of the time-series port, keyed `METHOD path` with Hono's `:param` syntax. */
export const OPERATIONS: Operations = {
  'GET /health': { summary: 'Liveness: status, uptime, storage state per tier, write-buffer memory', ok: { 200: 'alive' }, public: true },
  'GET /ready': { summary: 'Readiness (503 with a reason while starting, stopping or failing a check)', ok: { 200: 'ready' }, public: true },
  'GET /openapi.json': { summary: 'This document', ok: { 200: 'the OpenAPI 3.1 document' }, public: true },

  'GET /api/v1/auth/verify': { summary: 'Whether the sent token is valid, and whose it is', ok: { 200: '{valid, token?}' }, public: true },
  'GET /api/v1/auth/tokens': { summary: 'List tokens (admin)', ok: { 200: '{tokens, count}' } },
  'POST /api/v1/auth/tokens': { summary: 'Create a token (admin); the secret is shown once', body: tokenCreateBody, ok: { 201: 'the token record with token' } },
  'GET /api/v1/auth/tokens/:id': { summary: 'One token (admin)', ok: { 200: 'the token record' } },
  'PATCH /api/v1/auth/tokens/:id': { summary: 'Change a token (admin)', body: tokenPatchBody, ok: { 200: 'the token record' } },
  'DELETE /api/v1/auth/tokens/:id': { summary: 'Delete a token (admin)', ok: { 200: 'deleted' } },
  'POST /api/v1/auth/tokens/:id/rotate': { summary: 'Replace a token secret (admin); the new one is shown once', ok: { 200: 'the token record with token' } },
  'POST /api/v1/auth/tokens/:id/revoke': { summary: 'Revoke a token (admin)', ok: { 200: 'revoked' } },
  'GET /api/v1/auth/cache/stats': { summary: 'Token cache statistics (admin)', ok: { 200: 'hits, misses, size' } },
  'POST /api/v1/auth/cache/invalidate': { summary: 'Empty the token cache (admin)', ok: { 200: 'invalidated' } },

  'POST /api/v1/rbac/organizations': { summary: 'Create an organization (admin)', body: organizationBody, ok: { 201: 'the organization' } },
  'GET /api/v1/rbac/organizations': { summary: 'List organizations (admin)', ok: { 200: '{organizations, count}' } },
  'GET /api/v1/rbac/organizations/:org_id': { summary: 'One organization (admin)', ok: { 200: 'the organization' } },
  'PATCH /api/v1/rbac/organizations/:org_id': { summary: 'Change an organization (admin)', body: organizationPatch, ok: { 200: 'the organization' } },
  'DELETE /api/v1/rbac/organizations/:org_id': { summary: 'Delete an organization and its teams (admin)', ok: { 200: 'deleted' } },
  'POST /api/v1/rbac/organizations/:org_id/teams': { summary: 'Create a team (admin)', body: teamBody, ok: { 201: 'the team' } },
  'GET /api/v1/rbac/organizations/:org_id/teams': { summary: 'Teams of an organization (admin)', ok: { 200: '{teams, count}' } },
  'GET /api/v1/rbac/teams/:team_id': { summary: 'One team (admin)', ok: { 200: 'the team' } },
  'PATCH /api/v1/rbac/teams/:team_id': { summary: 'Change a team (admin)', body: teamPatch, ok: { 200: 'the team' } },
  'DELETE /api/v1/rbac/teams/:team_id': { summary: 'Delete a team (admin)', ok: { 200: 'deleted' } },
  'POST /api/v1/rbac/teams/:team_id/members': { summary: 'Add a token to a team (admin)', body: memberBody, ok: { 201: 'the membership' } },
  'GET /api/v1/rbac/teams/:team_id/members': { summary: 'Members of a team (admin)', ok: { 200: '{members, count}' } },
  'DELETE /api/v1/rbac/teams/:team_id/members/:token_id': { summary: 'Remove a token from a team (admin)', ok: { 200: 'removed' } },
  'POST /api/v1/rbac/teams/:team_id/roles': { summary: 'Create a role (admin)', body: roleBody, ok: { 201: 'the role' } },
  'GET /api/v1/rbac/teams/:team_id/roles': { summary: 'Roles of a team (admin)', ok: { 200: '{roles, count}' } },
  'GET /api/v1/rbac/roles/:role_id': { summary: 'One role (admin)', ok: { 200: 'the role' } },
  'PATCH /api/v1/rbac/roles/:role_id': { summary: 'Change a role (admin)', body: rolePatch, ok: { 200: 'the role' } },
  'DELETE /api/v1/rbac/roles/:role_id': { summary: 'Delete a role (admin)', ok: { 200: 'deleted' } },
  'POST /api/v1/rbac/roles/:role_id/measurements': { summary: 'Grant a role permissions on measurements (admin)', body: grantBody, ok: { 201: 'the grant' } },
  'GET /api/v1/rbac/roles/:role_id/measurements': { summary: 'Grants of a role (admin)', ok: { 200: '{measurements, count}' } },
  'PATCH /api/v1/rbac/roles/:role_id/measurements/:id': { summary: 'Change a grant (admin)', body: grantPatch, ok: { 200: 'the grant' } },
  'DELETE /api/v1/rbac/roles/:role_id/measurements/:id': { summary: 'Delete a grant (admin)', ok: { 200: 'deleted' } },
  'GET /api/v1/rbac/tokens/:token_id/effective': { summary: 'What a token may do, after every team and role (admin)', ok: { 200: 'the effective permissions' } },
  'GET /api/v1/rbac/check': { summary: 'Whether a token may do one thing to one measurement, and why (admin)', query: checkQuery, ok: { 200: '{allowed, reason}' } },

  'POST /api/v1/write/msgpack': { summary: 'Write MessagePack (columnar or row batches; GET /api/v1/write/msgpack/spec)', rawBody: { mediaType: 'application/msgpack', description: 'MessagePack batches (gzip with Content-Encoding: gzip)' }, ok: { 204: 'written: the rows will be queryable' } },
  'GET /api/v1/write/msgpack/stats': { summary: 'MessagePack write counters', ok: { 200: 'counters' } },
  'GET /api/v1/write/msgpack/spec': { summary: 'The MessagePack payload format', ok: { 200: 'the format description' } },
  'POST /write': lineProtocolWrite('Write line protocol, InfluxDB 1.x (`db` query parameter or x-svc-database)'),
  'POST /api/v2/write': lineProtocolWrite('Write line protocol, InfluxDB 2.x (`bucket` query parameter or x-svc-database)'),
  'POST /api/v1/write/line-protocol': lineProtocolWrite('Write line protocol (x-svc-database header)'),
  'POST /api/v1/write/line-protocol/flush': { summary: 'Flush every write buffer to storage now (admin)', ok: { 200: 'flushed' } },
  'GET /api/v1/write/line-protocol/stats': { summary: 'Line protocol write counters', ok: { 200: 'counters' } },
  'GET /api/v1/write/line-protocol/health': { summary: 'Whether line protocol writes are accepted', ok: { 200: 'healthy' } },
  'POST /api/v1/prom/write': {
    summary: 'Prometheus remote write 1.0 and 2.0 (snappy-compressed protobuf)',
    rawBody: { mediaType: 'application/x-protobuf', description: 'Remote-write 1.0 prometheus.WriteRequest, or 2.0 io.prometheus.write.v2.Request with Content-Type proto=io.prometheus.write.v2.Request (415 for another proto or a Content-Encoding other than snappy); snappy block compressed' },
    ok: { 204: 'written (2.0: X-Prometheus-Remote-Write-Samples-Written, -Histograms-Written, -Exemplars-Written headers)' },
  },
  'POST /api/v1/import/csv': { summary: 'Bulk import a CSV file (multipart upload or raw body)', rawBody: { mediaType: 'text/csv', description: 'CSV with a header row' }, query: csvQuery, ok: { 200: 'the import summary' } },
  'POST /api/v1/import/parquet': { summary: 'Bulk import a Parquet file', rawBody: { mediaType: 'application/vnd.apache.parquet', description: 'a Parquet file' }, query: parquetQuery, ok: { 200: 'the import summary' } },
  'POST /api/v1/import/lp': { summary: 'Bulk import a line protocol file', rawBody: LINE_PROTOCOL, query: lpQuery, ok: { 200: 'the import summary' } },
  'POST /api/v1/import/tle': { summary: 'Bulk import satellite two-line element sets', rawBody: { mediaType: 'text/plain', description: 'TLE sets (two or three lines each)' }, query: tleQuery, ok: { 200: 'the import summary' } },
  'POST /api/v1/write/tle': { summary: 'Write satellite two-line element sets', rawBody: { mediaType: 'text/plain', description: 'TLE sets (two or three lines each)' }, query: tleQuery, ok: { 200: 'the write summary' } },

  'POST /api/v1/query': { summary: 'Run a SQL query: JSON columns and rows', body: queryBody, ok: { 200: '{columns, data, row_count, ...}' } },
  'POST /api/v1/query/arrow': { summary: 'Run a SQL query: Arrow IPC stream', body: queryBody, ok: { 200: 'application/vnd.apache.arrow.stream' } },
  'POST /api/v1/query/msgpack': { summary: 'Run a SQL query: MessagePack', body: queryBody, ok: { 200: 'application/msgpack' } },
  'POST /api/v1/query/estimate': { summary: 'Estimate what a SQL query would scan, without running it', body: queryBody, ok: { 200: 'the estimate' } },
  'POST /api/v1/query/export': { summary: 'Stream a query result as CSV, NDJSON or Parquet', body: exportBody, ok: { 200: 'the export stream' } },
  'GET /api/v1/measurements': { summary: 'Measurements of the database', ok: { 200: '{measurements, count}' } },
  'GET /api/v1/query/:measurement': { summary: 'Rows of one measurement by time range', query: measurementParams, ok: { 200: '{columns, data, row_count}' } },

  'GET /metrics': { summary: 'Prometheus exposition of the service metrics', ok: { 200: 'text/plain; version=0.0.4' }, public: true },
  'GET /api/v1/metrics': { summary: 'Service metrics as JSON', ok: { 200: 'metrics' }, public: true },
  'GET /api/v1/metrics/memory': { summary: 'Process memory and garbage collection', ok: { 200: 'memory figures' }, public: true },
  'GET /api/v1/metrics/query-pool': { summary: 'Query pool state', ok: { 200: 'pool figures' }, public: true },
  'GET /api/v1/metrics/endpoints': { summary: 'Requests and latency per endpoint', ok: { 200: 'per-endpoint figures' }, public: true },
  'GET /api/v1/metrics/timeseries/:type': { summary: 'Recent history of a metric group (system, application, api)', query: timeseriesQuery, ok: { 200: 'time series' }, public: true },
  'GET /api/v1/logs': { summary: 'Recent log records (admin)', query: logsQuery, ok: { 200: '{logs, count}' } },

  'POST /api/v1/mqtt/subscriptions': { summary: 'Create an MQTT subscription', body: createSubscriptionBody, ok: { 201: 'the subscription' } },
  'GET /api/v1/mqtt/subscriptions': { summary: 'List MQTT subscriptions', ok: { 200: '{subscriptions, count}' } },
  'GET /api/v1/mqtt/subscriptions/:id': { summary: 'One MQTT subscription', ok: { 200: 'the subscription' } },
  'PUT /api/v1/mqtt/subscriptions/:id': { summary: 'Change an MQTT subscription', body: updateSubscriptionBody, ok: { 200: 'the subscription' } },
  'DELETE /api/v1/mqtt/subscriptions/:id': { summary: 'Delete an MQTT subscription', ok: { 200: 'deleted' } },
  'POST /api/v1/mqtt/subscriptions/:id/start': { summary: 'Start a subscription', ok: { 200: 'the subscription' } },
  'POST /api/v1/mqtt/subscriptions/:id/stop': { summary: 'Stop a subscription', ok: { 200: 'the subscription' } },
  'POST /api/v1/mqtt/subscriptions/:id/restart': { summary: 'Restart a subscription', ok: { 200: 'the subscription' } },
  'GET /api/v1/mqtt/subscriptions/:id/stats': { summary: 'Counters of one subscription', ok: { 200: 'counters' } },
  'GET /api/v1/mqtt/stats': { summary: 'Counters of every subscription', ok: { 200: 'counters' } },
  'GET /api/v1/mqtt/health': { summary: 'Whether every running subscription is connected', ok: { 200: 'healthy' } },

  'GET /api/wal/status': { summary: 'Write-ahead log state', ok: { 200: 'status' } },
  'GET /api/wal/files': { summary: 'Write-ahead log segment files', ok: { 200: '{files, count}' } },
  'GET /api/wal/health': { summary: 'Write-ahead log health', ok: { 200: 'healthy' } },
  'POST /api/wal/cleanup': { summary: 'Remove released segment files (admin)', query: cleanupQuery, ok: { 200: 'what was removed' } },

  'GET /api/v1/compaction/status': { summary: 'Compaction state', ok: { 200: 'status' } },
  'GET /api/v1/compaction/stats': { summary: 'Compaction counters', ok: { 200: 'counters' } },
  'GET /api/v1/compaction/candidates': { summary: 'Partitions that would be compacted', query: candidatesQuery, ok: { 200: '{candidates, count}' } },
  'GET /api/v1/compaction/jobs': { summary: 'Running compaction jobs', ok: { 200: '{jobs, count}' } },
  'GET /api/v1/compaction/history': { summary: 'Finished compaction jobs', query: historyQuery, ok: { 200: '{jobs, count}' } },
  'POST /api/v1/compaction/trigger': { summary: 'Compact now (admin)', body: triggerBody, ok: { 200: 'the started jobs' } },
  'POST /api/v1/compaction/hourly': { summary: 'Run the hourly tier now (admin)', body: triggerBody, ok: { 200: 'the started jobs' } },
  'POST /api/v1/compaction/daily': { summary: 'Run the daily tier now (admin)', body: triggerBody, ok: { 200: 'the started jobs' } },

  'POST /api/v1/backup': { summary: 'Start a backup (admin)', ok: { 202: 'the backup id' } },
  'GET /api/v1/backup': { summary: 'List backups (admin)', ok: { 200: '{backups, count}' } },
  'GET /api/v1/backup/status': { summary: 'Progress of the running backup or restore (admin)', ok: { 200: 'progress' } },
  'POST /api/v1/backup/restore': { summary: 'Restore a backup (admin)', body: restoreBody, ok: { 202: 'restore started' } },
  'GET /api/v1/backup/:id': { summary: 'One backup manifest (admin)', ok: { 200: 'the manifest' } },
  'DELETE /api/v1/backup/:id': { summary: 'Delete a backup (admin)', ok: { 200: 'deleted' } },

  'GET /api/v1/databases': { summary: 'List databases', ok: { 200: '{databases, count}' } },
  'POST /api/v1/databases': { summary: 'Create a database (admin)', body: databaseCreateBody, ok: { 201: 'the database' } },
  'GET /api/v1/databases/:name': { summary: 'One database', ok: { 200: 'the database' } },
  'GET /api/v1/databases/:name/measurements': { summary: 'Measurements of a database', ok: { 200: '{measurements, count}' } },
  'DELETE /api/v1/databases/:name': { summary: 'Delete a database and its data (admin; `?confirm=true`)', ok: { 200: 'deleted' } },
  'POST /api/v1/delete': { summary: 'Delete rows matching a WHERE clause (delete.enabled; admin or delete permission)', body: deleteBody, ok: { 200: 'rows deleted, files rewritten' } },
  'GET /api/v1/delete/config': { summary: 'Delete settings', ok: { 200: 'the settings' } },
  ...scheduledResource('/api/v1/retention', 'retention policy', createRetentionBody, updateRetentionBody),
  ...scheduledResource('/api/v1/continuous_queries', 'continuous query', createCqBody, updateCqBody, cqExecuteBody),
  ...scheduledResource('/api/v1/continuous-queries', 'continuous query', createCqBody, updateCqBody, cqExecuteBody),

  'GET /api/v1/queries/active': { summary: 'Running queries (query_management.enabled)', ok: { 200: '{queries, count}' }, optional: true },
  'GET /api/v1/queries/history': { summary: 'Finished queries (query_management.enabled)', query: queryHistoryQuery, ok: { 200: '{queries, count}' }, optional: true },
  'GET /api/v1/queries/:id': { summary: 'One query (query_management.enabled)', ok: { 200: 'the query' }, optional: true },
  'DELETE /api/v1/queries/:id': { summary: 'Cancel a running query (query_management.enabled)', ok: { 200: 'cancelled' }, optional: true },
  'POST /api/v1/governance/policies': { summary: 'Create a query policy (admin; governance.enabled)', body: createPolicyBody, ok: { 201: 'the policy' }, optional: true },
  'GET /api/v1/governance/policies': { summary: 'List query policies (governance.enabled)', ok: { 200: '{policies, count}' }, optional: true },
  'GET /api/v1/governance/policies/:id': { summary: 'One query policy (governance.enabled)', ok: { 200: 'the policy' }, optional: true },
  'PUT /api/v1/governance/policies/:id': { summary: 'Change a query policy (admin; governance.enabled)', body: updatePolicyBody, ok: { 200: 'the policy' }, optional: true },
  'DELETE /api/v1/governance/policies/:id': { summary: 'Delete a query policy (admin; governance.enabled)', ok: { 200: 'deleted' }, optional: true },
  'GET /api/v1/governance/usage/:token_id': { summary: 'Usage of a token against its policy (governance.enabled)', ok: { 200: 'usage' }, optional: true },
  'GET /api/v1/audit/logs': { summary: 'Audit events (admin; audit_log.enabled)', query: logParams, ok: { 200: '{events, count}' }, optional: true },
  'GET /api/v1/audit/stats': { summary: 'Audit counters (admin; audit_log.enabled)', ok: { 200: 'counters' }, optional: true },

  'GET /api/v1/cluster': { summary: 'Cluster state (standalone: {mode: "standalone"})', ok: { 200: 'state' } },
  'GET /api/v1/cluster/nodes': { summary: 'Cluster members', query: nodeFilter, ok: { 200: '{nodes, count}' } },
  'GET /api/v1/cluster/nodes/:id': { summary: 'One cluster member', ok: { 200: 'the node' } },
  'GET /api/v1/cluster/local': { summary: 'This node', ok: { 200: 'the node' } },
  'GET /api/v1/cluster/health': { summary: 'Cluster health', ok: { 200: 'health' } },
  'GET /api/v1/cluster/files': { summary: 'Files of the shared manifest', query: filesQuery, ok: { 200: '{files, count}' } },
  'DELETE /api/v1/cluster/nodes/:id': { summary: 'Remove a departed member (admin)', ok: { 200: 'removed' } },
  'DELETE /api/v1/cluster/elections/:election/holder': { summary: 'Forget an election holder that lost its lease, so a standby takes over with failover_enabled = false (admin)', ok: { 200: '{message, election, holder}' } },

  'GET /api/v1/tiering/status': { summary: 'Tiering state: backends, running, last and next run, last result ({enabled: false} when off)', ok: { 200: 'status' } },
  'GET /api/v1/tiering/stats': { summary: 'Files and bytes per tier and database, of the measurements the token may read (tiering.enabled)', ok: { 200: '{hot, cold, by_database}' }, optional: true },
  'GET /api/v1/tiering/files': { summary: 'Data files the token may read with their tier, size, partition hour and moved_at (tiering.enabled)', query: tieringFilesQuery, ok: { 200: '{files, count}' }, optional: true },
  'POST /api/v1/tiering/migrate': { summary: 'Move files to the cold tier now (admin; tiering.enabled); dry_run lists the plan and moves nothing', body: migrateBody, ok: { 200: 'the plan (dry run)', 202: '{job_id}' }, optional: true },
  'GET /api/v1/tiering/jobs/:id': { summary: 'One migration job (tiering.enabled)', ok: { 200: 'the job' }, optional: true },
  'POST /api/v1/tiering/policies': { summary: 'Create a tiering policy (admin; tiering.enabled)', body: tieringPolicyBody, ok: { 201: 'the policy' }, optional: true },
  'GET /api/v1/tiering/policies': { summary: 'List the tiering policies about data the token may read (tiering.enabled)', ok: { 200: '{policies, count}' }, optional: true },
  'GET /api/v1/tiering/policies/:id': { summary: 'One tiering policy; 404 also for one about data the token may not read (tiering.enabled)', ok: { 200: 'the policy' }, optional: true },
  'PUT /api/v1/tiering/policies/:id': { summary: 'Change a tiering policy (admin; tiering.enabled)', body: tieringPolicyBody, ok: { 200: 'the policy' }, optional: true },
  'DELETE /api/v1/tiering/policies/:id': { summary: 'Delete a tiering policy (admin; tiering.enabled)', ok: { 200: 'deleted' }, optional: true },

  'GET /': { summary: 'A browser (Accept: text/html) is sent to /console (console.enabled)', ok: { 302: 'redirect' }, public: true, optional: true },
  'GET /console': { summary: 'The web console page (console.enabled)', ok: { 200: 'text/html' }, public: true, optional: true },
  'GET /console/assets/app.js': { summary: 'The console script (console.enabled)', ok: { 200: 'text/javascript' }, public: true, optional: true },
  'GET /console/assets/app.css': { summary: 'The console style sheet (console.enabled)', ok: { 200: 'text/css' }, public: true, optional: true },
};

const INFO = {
  title: 'svc time-series service',
  version: '1.0.0',
  error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
};

/** The document for the routes the app registered; throws when they and the catalog disagree. */
export function openApiDocument(routes: readonly RegisteredRoute[]): Record<string, unknown> {
  return buildDocument(INFO, OPERATIONS, routes);
}
