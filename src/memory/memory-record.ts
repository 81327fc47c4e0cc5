/**
 * The memory record and its storage layout in the time-series measurement: one row per memory,
 * optional strings stored as '' (so every column is a plain VARCHAR), tags as `,a,b,` (exact match
 * with `contains(tags, ',a,')`), metadata as JSON text, time as epoch microseconds.
 */
import { isoMicros } from './sql.ts';

/** The four memory types of the spec. */
export const MEMORY_TYPES = ['episodic', 'session', 'decision', 'entity'] as const;
/** One of MEMORY_TYPES. */
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** A memory as the API returns it. */
export interface Memory {
  memory_id: string;
  time: string;
  org_id: string;
  agent_id: string;
  session_id: string | null;
  memory_type: string;
  event_type: string;
  content: string;
  metadata: Record<string, unknown> | null;
  tags: string[];
  importance: number;
  dedup_key: string;
  parent_id: string | null;
  /** 1 at creation, +1 per PATCH; every version stays in storage until purged. */
  version: number;
  /** When this version was written (the creation time for version 1). */
  updated_at: string;
  /** After this instant the memory is gone from every read; null: never. */
  expires_at: string | null;
}

/** A memory ready to be written: the API record plus its time in epoch microseconds. */
export interface StoredMemory extends Omit<Memory, 'time' | 'updated_at' | 'expires_at'> {
  timeUs: number;
  updatedUs: number;
  /** 0: never expires. */
  expiresUs: number;
}

/**
 * Columns selected for a memory, in this order; `time_us` is `epoch_us(time)` so no precision is lost.
 * Rows written before versions existed read as version 1, never expiring, updated when created.
 */
export const SELECT_COLUMNS =
  'epoch_us(time) AS time_us, memory_id, org_id, agent_id, session_id, memory_type, event_type, content, metadata, tags, importance, dedup_key, parent_id, ' +
  'coalesce(version, 1) AS version, coalesce(expires_at, 0) AS expires_us, coalesce(updated_at, epoch_us(time)) AS updated_us';

/** Tags as stored: `,a,b,` (empty string when none); commas inside tags are refused at validation. */
export function encodeTags(tags: readonly string[]): string {
  return tags.length === 0 ? '' : `,${tags.join(',')},`;
}

/** Inverse of encodeTags. */
export function decodeTags(stored: string): string[] {
  return stored ? stored.split(',').filter((t) => t.length > 0) : [];
}

/** The columnar write payload for rows (column name to equal-length arrays). */
export function toColumns(rows: readonly StoredMemory[]): {
  time: number[];
  strings: Record<string, string[]>;
  importance: number[];
  ints: Record<string, number[]>;
} {
  const col = (f: (r: StoredMemory) => string) => rows.map(f);
  return {
    time: rows.map((r) => r.timeUs),
    importance: rows.map((r) => r.importance),
    ints: { version: rows.map((r) => r.version), expires_at: rows.map((r) => r.expiresUs), updated_at: rows.map((r) => r.updatedUs) },
    strings: {
      memory_id: col((r) => r.memory_id),
      org_id: col((r) => r.org_id),
      agent_id: col((r) => r.agent_id),
      session_id: col((r) => r.session_id ?? ''),
      memory_type: col((r) => r.memory_type),
      event_type: col((r) => r.event_type),
      content: col((r) => r.content),
      metadata: col((r) => (r.metadata ? JSON.stringify(r.metadata) : '')),
      tags: col((r) => encodeTags(r.tags)),
      dedup_key: col((r) => r.dedup_key),
      parent_id: col((r) => r.parent_id ?? ''),
    },
  };
}

/** A memory from a query row keyed by SELECT_COLUMNS names. */
export function fromRow(row: Record<string, unknown>): Memory {
  const s = (k: string) => (row[k] == null ? '' : String(row[k]));
  return {
    memory_id: s('memory_id'),
    time: isoMicros(Number(row.time_us)),
    org_id: s('org_id'),
    agent_id: s('agent_id'),
    session_id: s('session_id') || null,
    memory_type: s('memory_type'),
    event_type: s('event_type'),
    content: s('content'),
    metadata: parseMetadata(s('metadata')),
    tags: decodeTags(s('tags')),
    importance: Number(row.importance ?? 0),
    dedup_key: s('dedup_key'),
    parent_id: s('parent_id') || null,
    version: Number(row.version ?? 1),
    updated_at: isoMicros(Number(row.updated_us ?? row.time_us)),
    expires_at: Number(row.expires_us ?? 0) > 0 ? isoMicros(Number(row.expires_us)) : null,
  };
}

/** A stored memory as the API shows it. */
export function toMemory(r: StoredMemory): Memory {
  const { timeUs, updatedUs, expiresUs, ...rest } = r;
  return { ...rest, time: isoMicros(timeUs), updated_at: isoMicros(updatedUs), expires_at: expiresUs > 0 ? isoMicros(expiresUs) : null };
}

/** The stored form of an API memory (inverse of toMemory). */
export function toStored(m: Memory): StoredMemory {
  const { time, updated_at, expires_at, ...rest } = m;
  return { ...rest, timeUs: isoToMicros(time), updatedUs: isoToMicros(updated_at), expiresUs: expires_at ? isoToMicros(expires_at) : 0 };
}

/** Epoch microseconds of an RFC 3339 timestamp with up to six fractional digits. */
export function isoToMicros(iso: string): number {
  const m = /\.(\d+)Z$/.exec(iso);
  const frac = (m?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return Math.floor(Date.parse(iso) / 1000) * 1_000_000 + Number(frac);
}

function parseMetadata(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
