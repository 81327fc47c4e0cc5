/**
 * /api/v1/cluster: membership and health of a cluster node. Reads need any valid token; removing a
 * node's record needs an admin token. With clustering off every route answers 404 saying so.
 *
 * GET /                -> {cluster, node_id, writer, compactor, nodes: {total, by_role, by_state},
 *                          etcd: {endpoints, healthy, members, leader}, manifest_revision}
 * GET /nodes           -> {nodes, count}; filters role, state (an invalid value: 400 listing the valid ones)
 * GET /nodes/:id       -> the node record {id, role, state, address, version, started_at, last_heartbeat}; 404 unknown
 * GET /local           -> this node's record plus {is_leader}
 * GET /health          -> {healthy, node_id, etcd: {endpoints, reachable, members, leader, error?}}; 503 without quorum
 * GET /files (admin)   -> {files, count, total, revision, next_after}: the shared manifest as this node applied
 *                         it, in path order; `database`, `measurement` filters; `limit` (default 100, max 1000);
 *                         `after` = the previous page's next_after (null on the last page)
 * DELETE /nodes/:id    -> {message, id}; 409 for a live node unless ?force=true; 404 unknown
 * DELETE /elections/:election/holder (admin; writer|compactor) -> {message, election, holder}: forgets a
 *                         holder that lost its lease, so standbys waiting under failover_enabled = false
 *                         take over; 409 while that holder campaigns; 404 without a record
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { ROLES, STATES, type ClusterNode } from '../../cluster/index.ts';
import { AppError } from '../../lib/errors.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

export const filesQuery = z.object({
  database: z.string().optional(),
  measurement: z.string().optional(),
  limit: z.coerce.number().int().min(1, 'limit must be between 1 and 1000').max(1000, 'limit must be between 1 and 1000').default(100),
  after: z.string().optional(),
});

export const electionParam = z.enum(['writer', 'compactor'], { error: 'election must be writer or compactor' });

export const nodeFilter = z.object({
  role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }).optional(),
  state: z.enum(STATES, { error: `state must be one of ${STATES.join(', ')}` }).optional(),
});

/** A file of the manifest as the files route lists it. */
export interface ManifestFileView {
  path: string;
  database: string;
  measurement: string;
  minTime: number;
  maxTime: number;
  rows: number;
  bytes: number;
  seq: number;
  createdAt: string;
}

/** The /api/v1/cluster router; `node()` is null when clustering is off (or before the node joined). */
export function clusterRoutes(node: () => ClusterNode | null, files: (database?: string) => ManifestFileView[]) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    if (!node()) throw new AppError('not_found', 'clustering is not enabled on this node (cluster.enabled = false)');
    return next();
  });
  const cluster = () => node()!;

  app.get('/', async (c) => c.json(await cluster().status()));
  app.get('/nodes', async (c) => {
    const { role, state } = readQuery(c, nodeFilter);
    const nodes = (await cluster().nodes()).filter((n) => (!role || n.role === role) && (!state || n.state === state));
    return c.json({ nodes, count: nodes.length });
  });
  app.get('/nodes/:id', async (c) => {
    const id = c.req.param('id');
    const found = (await cluster().nodes()).find((n) => n.id === id);
    if (!found) throw new AppError('not_found', `cluster node '${id}' not found`);
    return c.json(found);
  });
  app.get('/local', (c) => c.json({ ...cluster().self, is_leader: cluster().isLeader }));
  app.get('/health', async (c) => {
    const h = await cluster().health();
    const body = { healthy: h.healthy, node_id: cluster().settings.nodeId, etcd: { endpoints: h.endpoints, reachable: h.healthy, members: h.members, leader: h.leader, ...(h.error ? { error: h.error } : {}) } };
    return c.json(body, h.healthy ? 200 : 503);
  });
  app.get('/files', requireAdmin, (c) => {
    const q = readQuery(c, filesQuery);
    const all = files(q.database)
      .filter((f) => !q.measurement || f.measurement === q.measurement)
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const from = q.after === undefined ? 0 : all.findIndex((f) => f.path > q.after!);
    const page = from < 0 ? [] : all.slice(from, from + q.limit);
    const more = from >= 0 && from + q.limit < all.length;
    const view = page.map((f) => ({
      path: f.path, database: f.database, measurement: f.measurement, min_time: new Date(f.minTime / 1000).toISOString(), max_time: new Date(f.maxTime / 1000).toISOString(),
      rows: f.rows, bytes: f.bytes, seq: f.seq, created_at: f.createdAt,
    }));
    return c.json({ files: view, count: view.length, total: all.length, revision: cluster().manifestRevision(), next_after: more ? page[page.length - 1]!.path : null });
  });
  app.delete('/nodes/:id', requireAdmin, async (c) => {
    const id = c.req.param('id');
    const outcome = await cluster().removeNode(id, c.req.query('force') === 'true');
    if (outcome === 'unknown') throw new AppError('not_found', `cluster node '${id}' not found`);
    if (outcome === 'alive') throw new AppError('conflict', `cluster node '${id}' is alive; stop it first or pass ?force=true`);
    return c.json({ message: `cluster node ${id} removed`, id });
  });
  app.delete('/elections/:election/holder', requireAdmin, async (c) => {
    const parsed = electionParam.safeParse(c.req.param('election'));
    if (!parsed.success) throw new AppError('invalid', 'election must be writer or compactor');
    const election = parsed.data;
    const { outcome, holder } = await cluster().releaseHolder(election);
    if (outcome === 'none') throw new AppError('not_found', `no ${election} holder is recorded (the last one resigned, or none was elected yet)`);
    if (outcome === 'campaigning') throw new AppError('conflict', `the ${election} holder ${holder} holds its lease and campaigns: it leads or is about to; stop it gracefully to hand over`);
    if (outcome === 'changed') throw new AppError('conflict', `the ${election} holder record changed meanwhile; look again`);
    return c.json({ message: `the ${election} holder ${holder} is forgotten: the next candidate takes over`, election, holder });
  });
  return app;
}
