/**
 * What the shared WAL keeps in etcd and the bucket, and how it is read back: one key per segment
 * (`<prefix>/wal/segments/<id>`, naming its object in the bucket and its entry count) and one key per
 * flush that covered entries (`<prefix>/wal/covered/<uuid>`, written in the same transaction that
 * registers the flush's files). An entry not named by any covered key is not yet in a registered file.
 * A segment key may instead hold a withdrawal: the segment's registration was never answered, and the
 * primary settled it as not stored (see SharedWal), so a registration that reaches etcd late fails.
 */
import { z } from 'zod';
import type { ColumnBatch } from '../ingest/index.ts';
import { decodeBatches, encodeBatches } from '../wal/index.ts';
import type { EtcdClient } from './etcd/etcd-client.ts';

const segmentRecord = z.object({ object: z.string(), entries: z.number().int().positive(), node: z.string(), created_at: z.string() });
/** A registered segment, as etcd stores it. */
export type SegmentRecord = z.infer<typeof segmentRecord>;
const withdrawnRecord = z.object({ withdrawn: z.literal(true), node: z.string(), at: z.string() });
const coveredRecord = z.object({ segments: z.record(z.string(), z.array(z.number().int().nonnegative())) });

/** One entry of a shared segment: the proof a write is durable, and what a flush records as covered. */
export class SharedTicket {
  constructor(
    readonly segment: string,
    readonly entry: number,
    /** The primary term that buffered it (a fenced term's tickets are dropped, not flushed). */
    readonly term: number,
  ) {}
}

/** Keys of one cluster's shared WAL. */
export class SharedWalKeys {
  constructor(readonly prefix: string) {}
  get segments(): string {
    return `${this.prefix}/wal/segments/`;
  }
  get covered(): string {
    return `${this.prefix}/wal/covered/`;
  }
  segment(id: string): string {
    return this.segments + id;
  }
}

/** The shared WAL as etcd saw it at one revision. */
export interface SharedWalState {
  revision: number;
  /** Segments in registration order (create revision). */
  segments: { id: string; record: SegmentRecord }[];
  /** Per segment, the entries some flush covered. */
  covered: Map<string, Set<number>>;
  /** Every covered key and the segments it names. */
  coveredKeys: { key: string; segments: string[] }[];
  /** Withdrawn segment keys, with when they were withdrawn (ms since the epoch). */
  withdrawn: { key: string; at: number }[];
}

/** The value of a withdrawn segment key. */
export function withdrawnValue(node: string): string {
  return JSON.stringify({ withdrawn: true, node, at: new Date().toISOString() });
}

/** Reads every segment and covered key at one revision. */
export async function readSharedWal(client: EtcdClient, keys: SharedWalKeys): Promise<SharedWalState> {
  const seg = await client.getPrefix(keys.segments);
  const cov = await client.getPrefix(keys.covered, { revision: seg.revision });
  const segments: SharedWalState['segments'] = [];
  const withdrawn: SharedWalState['withdrawn'] = [];
  for (const kv of seg.kvs.sort((a, b) => a.create_revision - b.create_revision)) {
    const value: unknown = JSON.parse(kv.value);
    const w = withdrawnRecord.safeParse(value);
    if (w.success) withdrawn.push({ key: kv.key, at: Date.parse(w.data.at) });
    else segments.push({ id: kv.key.slice(keys.segments.length), record: segmentRecord.parse(value) });
  }
  const covered = new Map<string, Set<number>>();
  const coveredKeys: SharedWalState['coveredKeys'] = [];
  for (const kv of cov.kvs) {
    const rec = coveredRecord.parse(JSON.parse(kv.value));
    coveredKeys.push({ key: kv.key, segments: Object.keys(rec.segments) });
    for (const [id, entries] of Object.entries(rec.segments)) {
      let set = covered.get(id);
      if (!set) covered.set(id, (set = new Set()));
      for (const e of entries) set.add(e);
    }
  }
  return { revision: seg.revision, segments, covered, coveredKeys, withdrawn };
}

/** True when every entry of a segment is in a registered file. */
export function fullyCovered(s: SharedWalState, id: string, entries: number): boolean {
  const done = s.covered.get(id);
  if (!done || done.size < entries) return false;
  for (let i = 0; i < entries; i++) if (!done.has(i)) return false;
  return true;
}

/** The put that records `tickets` (those of the shared WAL) as covered, or null when there are none. */
export function coveredPut(keys: SharedWalKeys, tickets: readonly unknown[]): { key: string; value: string } | null {
  const segments: Record<string, number[]> = {};
  let any = false;
  for (const t of tickets) {
    if (!(t instanceof SharedTicket)) continue;
    (segments[t.segment] ??= []).push(t.entry);
    any = true;
  }
  return any ? { key: keys.covered + crypto.randomUUID(), value: JSON.stringify({ segments }) } : null;
}

const MAGIC = new TextEncoder().encode('SVCSWAL2');

/**
 * One entry of a segment, compressed on its own (zstd level 1, off the event loop) as soon as its
 * write is queued, so a commit only joins what is ready: its `u32 length` and encoded write as one
 * zstd frame. Compressed because every byte crosses to the bucket before the write is acknowledged.
 */
export async function encodeEntry(database: string, batch: ColumnBatch): Promise<Uint8Array> {
  const raw = encodeBatches(database, [batch], 4);
  new DataView(raw.buffer, raw.byteOffset, 4).setUint32(0, raw.length - 4, true);
  return await Bun.zstdCompress(raw, { level: 1 });
}

/**
 * A segment object: magic, then zstd frames that decompress, one after the other, to the entry count
 * and each entry's length and encoded write (frames of `encodeEntry`). Concatenated frames are one
 * valid zstd stream, so a segment compressed whole (as before entries were compressed one by one)
 * reads the same.
 */
export function encodeSegment(frames: readonly Uint8Array[]): Uint8Array {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, frames.length, true);
  const head = Bun.zstdCompressSync(count, { level: 1 });
  const out = new Uint8Array(MAGIC.length + head.length + frames.reduce((n, f) => n + f.length, 0));
  out.set(MAGIC, 0);
  out.set(head, MAGIC.length);
  let at = MAGIC.length + head.length;
  for (const f of frames) {
    out.set(f, at);
    at += f.length;
  }
  return out;
}

/** The entries of a segment object, in order; throws on an object that is not one. */
export function decodeSegment(bytes: Uint8Array): { database: string; batches: ColumnBatch[] }[] {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) throw new Error('not a shared WAL segment (bad magic)');
  let raw: Uint8Array;
  try {
    raw = Bun.zstdDecompressSync(bytes.subarray(MAGIC.length));
  } catch (err) {
    throw new Error(`shared WAL segment truncated or damaged: ${(err as Error).message}`);
  }
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw.length < 4) throw new Error('shared WAL segment truncated: no entry count');
  const count = view.getUint32(0, true);
  const out: { database: string; batches: ColumnBatch[] }[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 4 > raw.length) throw new Error(`shared WAL segment truncated at entry ${i} of ${count}`);
    const len = view.getUint32(at, true);
    if (at + 4 + len > raw.length) throw new Error(`shared WAL segment truncated at entry ${i} of ${count}`);
    out.push(decodeBatches(raw.subarray(at + 4, at + 4 + len)));
    at += 4 + len;
  }
  return out;
}
