/**
 * Periodic snapshots of the shared manifest in the bucket, so a joining node starts from one object
 * read and replays only the changes after it (etcd's watch from the snapshot's revision) instead of
 * paging through every file key in etcd. A snapshot is only a shortcut: one that is missing, unreadable,
 * from another etcd cluster (its epoch differs) or older than etcd's compacted history is ignored and
 * the node loads the manifest from etcd as before.
 */
import { z } from 'zod';
import type { ManifestFile } from '../catalog/index.ts';
import { messageOf } from '../lib/errors.ts';
import type { ObjectStore } from '../storage/index.ts';
import type { EtcdClient } from './etcd/etcd-client.ts';

/** A manifest record as etcd and the bucket store it. */
export const manifestFile = z.object({
  path: z.string(),
  database: z.string(),
  measurement: z.string(),
  hour: z.number(),
  minTime: z.number(),
  maxTime: z.number(),
  rows: z.number(),
  bytes: z.number(),
  columns: z.array(z.string()),
  seq: z.number(),
  createdAt: z.string(),
  // Tiering: absent in snapshots written before it (every file hot then).
  tier: z.enum(['hot', 'cold']).optional(),
  movedAt: z.string().nullable().optional(),
});

const snapshotSchema = z.object({
  format: z.literal(1),
  prefix: z.string(),
  epoch: z.string(),
  revision: z.number().int().positive(),
  created_at: z.string(),
  files: z.array(manifestFile),
});

/** A snapshot as written to the bucket. */
export type ManifestSnapshot = z.infer<typeof snapshotSchema>;

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Where one cluster keeps its snapshot in the bucket (outside every database's folder). */
export function snapshotKey(clusterName: string): string {
  return `_cluster/${clusterName}/manifest-snapshot.json`;
}

/**
 * The etcd cluster's identity for this svc cluster: a random id created once under the prefix. A
 * snapshot taken against another etcd (wiped and recreated, its revisions restarted) carries another
 * epoch and is not used.
 */
export async function manifestEpoch(client: EtcdClient, prefix: string): Promise<string> {
  const key = `${prefix}/manifest/epoch`;
  const fresh = crypto.randomUUID();
  const r = await client.txn([{ key, target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ put: { key, value: fresh } }], [{ get: { key } }]);
  return r.succeeded ? fresh : (r.reads[0]?.[0]?.value ?? fresh);
}

/** Reads and reads back snapshots of one cluster's manifest. */
export class ManifestSnapshots {
  constructor(
    private readonly store: ObjectStore,
    private readonly key: string,
    private readonly prefix: string,
    private readonly log: Log,
  ) {}

  /** Writes the manifest as of `revision`. */
  async write(epoch: string, revision: number, files: readonly ManifestFile[]): Promise<void> {
    const snapshot: ManifestSnapshot = { format: 1, prefix: this.prefix, epoch, revision, created_at: new Date().toISOString(), files: [...files] };
    await this.store.put(this.key, new TextEncoder().encode(JSON.stringify(snapshot)));
  }

  /** The snapshot of this cluster and epoch, or null (none, unreadable, or not this cluster's). */
  async read(epoch: string): Promise<ManifestSnapshot | null> {
    let bytes: Uint8Array;
    try {
      if (!(await this.store.stat(this.key))) return null;
      bytes = await this.store.get(this.key);
    } catch (err) {
      this.log.warn('cannot read the manifest snapshot; loading the manifest from etcd', { key: this.key, error: messageOf(err) });
      return null;
    }
    let parsed: ReturnType<typeof snapshotSchema.safeParse>;
    try {
      parsed = snapshotSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    } catch (err) {
      this.log.warn('the manifest snapshot is not valid JSON; loading the manifest from etcd', { key: this.key, error: messageOf(err) });
      return null;
    }
    if (!parsed.success) {
      this.log.warn('the manifest snapshot has an unknown shape; loading the manifest from etcd', { key: this.key });
      return null;
    }
    const s = parsed.data;
    if (s.prefix !== this.prefix || s.epoch !== epoch) {
      this.log.info('the manifest snapshot belongs to another etcd cluster; loading the manifest from etcd', { key: this.key });
      return null;
    }
    return s;
  }
}
