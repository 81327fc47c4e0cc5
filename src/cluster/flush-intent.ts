/**
 * A manifest change too large for one etcd transaction, recorded whole before any of it is applied (a
 * redo record), so that it ends all applied or, after a crash part way, is completed by the next
 * primary: never left half done. Its parts (`<prefix>/manifest/intents/<id>/part-<n>`, each the files
 * one transaction registers or removes) are written first and mean nothing alone; the head
 * (`.../<id>/head`, naming the part count and the shared WAL coverage the change records) makes them
 * live. Each part is applied by one transaction that also deletes the part key and holds only while
 * the key exists, so a part is applied exactly once whoever applies it; the last transaction applies
 * the coverage and deletes the head.
 */
import { z } from 'zod';
import type { ManifestFile } from '../catalog/index.ts';
import { AppError } from '../lib/errors.ts';
import type { EtcdClient, Op } from './etcd/etcd-client.ts';
import { manifestFile } from './manifest-snapshot.ts';

/** One key and value a transaction puts. */
export interface Put {
  key: string;
  value: string;
}

const partRecord = z.object({ removed: z.array(z.string()), added: z.array(manifestFile), created_at: z.string() });
const headRecord = z.object({ parts: z.number().int().positive(), coverage: z.array(z.object({ key: z.string(), value: z.string() })), created_at: z.string() });
type PartRecord = z.infer<typeof partRecord>;
type HeadRecord = z.infer<typeof headRecord>;

/** A part of an intent: its key and the files one transaction applies. */
export interface IntentPart {
  key: string;
  removed: string[];
  added: ManifestFile[];
}

/** A recorded change: the parts not yet applied, and the coverage its last transaction writes. */
export interface Intent {
  id: string;
  head: string;
  /** The key prefix of every key of this intent. */
  dir: string;
  parts: IntentPart[];
  coverage: Put[];
}

/** A part holds what one registering transaction applies: at most this many files... */
const PART_FILES = 100;
/** ...and at most this many bytes of records (their puts must fit etcd's 1.5 MiB request limit). */
const PART_BYTES = 256 * 1024;
/** Bytes of parts written per transaction, under etcd's 1.5 MiB request limit. */
const WRITE_BYTES = 1024 * 1024;
/** Parts without a head older than this belong to a commit that died before its head: litter. */
const STRAY_MS = 60 * 60_000;

/** Where one cluster keeps its intents. */
function intentRoot(prefix: string): string {
  return `${prefix}/manifest/intents/`;
}

/** Splits a change into parts of at most PART_FILES files and PART_BYTES bytes: removals first, then registrations. */
export function planIntent(prefix: string, removed: readonly string[], added: readonly ManifestFile[], coverage: Put[]): Intent {
  const id = crypto.randomUUID();
  const dir = `${intentRoot(prefix)}${id}/`;
  const parts: IntentPart[] = [];
  const cut = <T>(items: readonly T[], size: (t: T) => number, into: (batch: T[]) => Omit<IntentPart, 'key'>) => {
    let batch: T[] = [];
    let bytes = 0;
    const close = () => {
      if (batch.length > 0) parts.push({ key: `${dir}part-${String(parts.length).padStart(6, '0')}`, ...into(batch) });
      batch = [];
      bytes = 0;
    };
    for (const item of items) {
      const n = size(item);
      if (batch.length >= PART_FILES || (batch.length > 0 && bytes + n > PART_BYTES)) close();
      batch.push(item);
      bytes += n;
    }
    close();
  };
  cut(removed, (p) => p.length, (batch) => ({ removed: batch, added: [] }));
  cut(added, (f) => JSON.stringify(f).length, (batch) => ({ removed: [], added: batch }));
  return { id, head: `${dir}head`, dir, parts, coverage };
}

/**
 * The transactions that record `intent`, in order: its parts in groups of at most WRITE_BYTES, and its
 * head in the last one. Throws when the head alone exceeds what one transaction may carry.
 */
export function intentWrites(intent: Intent): Op[][] {
  const now = new Date().toISOString();
  const head: HeadRecord = { parts: intent.parts.length, coverage: intent.coverage, created_at: now };
  const headValue = JSON.stringify(head);
  if (headValue.length > WRITE_BYTES) throw new AppError('invalid', `cannot record a manifest change whose write-ahead coverage takes ${headValue.length} bytes in etcd (at most ${WRITE_BYTES}); flush more often (ingest.max_buffer_size)`);
  const groups: Op[][] = [];
  let group: Op[] = [];
  let bytes = 0;
  const add = (key: string, value: string) => {
    if (group.length > 0 && (group.length >= PART_FILES || bytes + value.length > WRITE_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push({ put: { key, value } });
    bytes += value.length;
  };
  for (const p of intent.parts) add(p.key, JSON.stringify({ removed: p.removed, added: p.added, created_at: now } satisfies PartRecord));
  add(intent.head, headValue);
  groups.push(group);
  return groups;
}

/**
 * The live intents under `prefix` (oldest first), the keys of parts no head made live that are older
 * than STRAY_MS, and the keys that are not an intent's (skipped: they must not keep the cluster
 * without a primary, as an undecodable shared WAL segment does not).
 */
export async function readIntents(client: EtcdClient, prefix: string): Promise<{ live: Intent[]; stray: string[]; unreadable: string[] }> {
  const root = intentRoot(prefix);
  const heads = new Map<string, { createRevision: number; record: HeadRecord }>();
  const parts = new Map<string, { key: string; record: PartRecord }[]>();
  const unreadable: string[] = [];
  for (const kv of (await client.getPrefixPaged(root)).kvs) {
    const [id = '', name] = kv.key.slice(root.length).split('/');
    const head = name === 'head' ? headRecord.safeParse(parseJson(kv.value)) : null;
    const part = name?.startsWith('part-') ? partRecord.safeParse(parseJson(kv.value)) : null;
    if (head?.success) heads.set(id, { createRevision: kv.create_revision, record: head.data });
    else if (part?.success) (parts.get(id) ?? parts.set(id, []).get(id)!).push({ key: kv.key, record: part.data });
    else unreadable.push(kv.key);
  }
  const live = [...heads]
    .sort(([, a], [, b]) => a.createRevision - b.createRevision)
    .map(([id, h]): Intent => ({
      id,
      head: `${root}${id}/head`,
      dir: `${root}${id}/`,
      // Part keys sort in part order (zero-padded); those already applied are gone.
      parts: (parts.get(id) ?? []).sort((a, b) => (a.key < b.key ? -1 : 1)).map((p) => ({ key: p.key, removed: p.record.removed, added: p.record.added })),
      coverage: h.record.coverage,
    }));
  const old = Date.now() - STRAY_MS;
  const stray = [...parts].filter(([id]) => !heads.has(id)).flatMap(([, ps]) => ps.filter((p) => Date.parse(p.record.created_at) < old).map((p) => p.key));
  return { live, stray, unreadable };
}

/** The value of JSON `text`, or null when it is not JSON (a record that then fails its schema). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
