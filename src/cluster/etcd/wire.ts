/**
 * The shapes of etcd's v3 JSON gateway: keys and values travel as base64, 64-bit integers as
 * decimal strings, and fields equal to their default (0, false, "") are left out.
 */
import { z } from 'zod';

const int64 = z.union([z.string(), z.number()]).optional().transform((v) => (v === undefined ? 0 : Number(v)));
const bytes = z.string().optional().transform((v) => (v === undefined ? '' : Buffer.from(v, 'base64').toString('utf8')));

export const headerSchema = z.object({ revision: int64, member_id: z.string().optional(), raft_term: int64 }).prefault({});

export const kvSchema = z.object({
  key: bytes,
  value: bytes,
  create_revision: int64,
  mod_revision: int64,
  version: int64,
  lease: int64,
});

/** One key as etcd stores it, decoded. */
export type KeyValue = z.output<typeof kvSchema>;

export const rangeSchema = z.object({ header: headerSchema, kvs: z.array(kvSchema).optional().transform((v) => v ?? []), count: int64, more: z.boolean().optional() });

export const txnSchema = z.object({
  header: headerSchema,
  succeeded: z.boolean().optional().transform((v) => v ?? false),
  responses: z
    .array(z.object({ response_range: rangeSchema.optional(), response_put: z.object({}).passthrough().optional(), response_delete_range: z.object({ deleted: int64 }).optional() }))
    .optional()
    .transform((v) => v ?? []),
});

export const leaseGrantSchema = z.object({ header: headerSchema, ID: z.string(), TTL: int64, error: z.string().optional() });
export const keepAliveSchema = z.object({ result: z.object({ ID: z.string().optional(), TTL: int64 }).optional(), error: z.object({ message: z.string().optional() }).passthrough().optional() });

export const eventSchema = z.object({ type: z.enum(['PUT', 'DELETE']).optional().transform((v) => v ?? 'PUT'), kv: kvSchema, prev_kv: kvSchema.optional() });
/** One change a watch reports. */
export type WatchEvent = z.output<typeof eventSchema>;

export const watchMessageSchema = z.object({
  result: z
    .object({
      header: headerSchema,
      created: z.boolean().optional(),
      canceled: z.boolean().optional(),
      compact_revision: int64,
      cancel_reason: z.string().optional(),
      events: z.array(eventSchema).optional().transform((v) => v ?? []),
    })
    .optional(),
  error: z.object({ message: z.string().optional() }).passthrough().optional(),
});

export const memberListSchema = z.object({
  header: headerSchema,
  members: z.array(z.object({ ID: z.string(), name: z.string().optional().default(''), clientURLs: z.array(z.string()).optional().default([]), peerURLs: z.array(z.string()).optional().default([]) })).default([]),
});

export const statusSchema = z.object({ header: headerSchema, version: z.string(), leader: z.string().optional().default(''), raftIndex: int64, dbSize: int64 });

/** The gateway's error body (gRPC status as JSON). */
export const errorSchema = z.object({ error: z.string().optional(), message: z.string().optional(), code: z.number().optional() });

/** Text as the gateway's base64. */
export const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** The range end that selects every key starting with `prefix` (the prefix with its last byte incremented). */
export function prefixEnd(prefix: string): string {
  const buf = Buffer.from(prefix, 'utf8');
  for (let i = buf.length - 1; i >= 0; i--) {
    if (buf[i]! < 0xff) {
      const end = Buffer.from(buf.subarray(0, i + 1));
      end[i] = buf[i]! + 1;
      return end.toString('base64');
    }
  }
  // Only 0xff bytes: every key from the prefix on.
  return Buffer.from([0]).toString('base64');
}
