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
}

/** A memory ready to be written: the API record plus its time in epoch microseconds. */
export interface StoredMemory extends Omit<Memory, 'time'> {
  timeUs: number;
}

/** Columns selected for a memory, in this order; `time_us` is `epoch_us(time)` so no precision is lost. */
export const SELECT_COLUMNS =
  'epoch_us(time) AS time_us, memory_id, org_id, agent_id, session_id, memory_type, event_type, content, metadata, tags, importance, dedup_key, parent_id';

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
} {
  const col = (f: (r: StoredMemory) => string) => rows.map(f);
  return {
    time: rows.map((r) => r.timeUs),
    importance: rows.map((r) => r.importance),
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
  };
}

/** A stored memory as the API shows it. */
export function toMemory(r: StoredMemory): Memory {
  const { timeUs, ...rest } = r;
  return { ...rest, time: isoMicros(timeUs) };
}

function parseMetadata(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
