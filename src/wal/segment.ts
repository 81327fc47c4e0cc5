/**
 * One WAL segment file `<directory>/<seq>.wal`: appends are single synchronous writes (so an entry is
 * in the OS page cache, and survives a killed process, before append returns); syncs run off the
 * event loop; close waits for an in-flight sync so a descriptor is never closed under it.
 */
import { closeSync, fdatasync, fsync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { dropCachedPages } from '../lib/page-cache.ts';
import { FILE_HEADER } from './frame.ts';

/**
 * Synced bytes are dropped from the page cache up to a multiple of this: a WAL is read back only by a
 * replay, and keeping its last partial page cached spares the next append a read of it from disk.
 */
const PAGE = 4096;

/** How segment files reach the disk. `async` leaves it to the OS. */
export type SyncMode = 'fdatasync' | 'fsync' | 'async';

const NAME = /^(\d+)\.wal$/;
const RECOVERED = /^(\d+)\.wal\.recovered$/;

/** File name of segment `seq`: zero-padded so names sort in sequence order. */
export const segmentName = (seq: number): string => `${String(seq).padStart(16, '0')}.wal`;
/** Sequence number of a segment file name, or null for any other name. */
export const parseSegmentName = (name: string): number | null => (NAME.test(name) ? Number(NAME.exec(name)![1]) : null);
/** Sequence number of a `.wal.recovered` file name, or null. */
export const parseRecoveredName = (name: string): number | null => (RECOVERED.test(name) ? Number(RECOVERED.exec(name)![1]) : null);

/** Lifecycle of a segment: being written, closed with entries awaiting release, or read back at start. */
export type SegmentState = 'active' | 'closed' | 'replayed';

/** A segment file and its bookkeeping: unreleased entries, size, age, unsynced bytes. */
export class Segment {
  readonly name: string;
  readonly path: string;
  state: SegmentState;
  size: number;
  /** Entries appended (or replayed) whose rows are not yet in flushed files. */
  pending = 0;
  entries = 0;
  records = 0;
  /** Set while a replay still hands this file's entries out; such a file is not removed yet. */
  replaying = false;
  private fd: number | null;
  private dirty = false;
  private dirtySince = 0;
  private syncing: Promise<void> | null = null;
  /** Bytes from the start already synced and dropped from the page cache. */
  private dropped = 0;
  private closing: Promise<void> | null = null;

  private constructor(
    readonly seq: number,
    directory: string,
    fd: number | null,
    size: number,
    readonly createdAt: number,
    state: SegmentState,
  ) {
    this.name = segmentName(seq);
    this.path = join(directory, this.name);
    this.fd = fd;
    this.size = size;
    this.state = state;
  }

  /** Creates a new, empty segment file (fails if it exists) and writes its header. */
  static create(directory: string, seq: number): Segment {
    const path = join(directory, segmentName(seq));
    const fd = openSync(path, 'wx');
    const seg = new Segment(seq, directory, fd, 0, Date.now(), 'active');
    try {
      seg.write(FILE_HEADER);
    } catch (err) {
      closeSync(fd);
      unlinkSync(path);
      throw err;
    }
    return seg;
  }

  /** A segment found on disk at start, read back by replay and never written again. */
  static replayed(directory: string, seq: number, size: number, createdAt: number): Segment {
    return new Segment(seq, directory, null, size, createdAt, 'replayed');
  }

  /** True while the file has bytes written since the last sync. */
  get unsynced(): boolean {
    return this.dirty;
  }

  /** When the oldest unsynced write happened (epoch ms), or null when everything is synced. */
  get unsyncedSince(): number | null {
    return this.dirty ? this.dirtySince : null;
  }

  /**
   * Appends `bytes` with one write (looping only if the OS writes part of it) and returns the offset
   * where they start. On failure the file is truncated back so no torn entry stays in the middle.
   */
  write(bytes: Uint8Array): number {
    if (this.fd === null) throw new Error(`segment ${this.name} is closed`);
    const start = this.size;
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done, start + done);
    } catch (err) {
      try {
        ftruncateSync(this.fd, start);
      } catch {
        // The partial entry stays; replay skips it by its CRC.
      }
      throw err;
    }
    this.size = start + bytes.length;
    if (!this.dirty) this.dirtySince = Date.now();
    this.dirty = true;
    return start;
  }

  /** Flushes written bytes to disk per `mode` without blocking the event loop; one sync at a time. */
  sync(mode: SyncMode): Promise<void> {
    if (this.syncing) return this.syncing;
    if (mode === 'async' || !this.dirty || this.fd === null) return Promise.resolve();
    return this.startSync(this.fd, mode);
  }

  private startSync(fd: number, mode: 'fsync' | 'fdatasync'): Promise<void> {
    this.dirty = false;
    const synced = this.size;
    const run = new Promise<void>((resolve, reject) => {
      const done = (err: NodeJS.ErrnoException | null) => (err ? reject(err) : resolve());
      if (mode === 'fsync') fsync(fd, done);
      else fdatasync(fd, done);
    });
    this.syncing = run.then(
      () => {
        this.syncing = null;
        // Still open here: close waits for this sync before closing the descriptor.
        const whole = synced - (synced % PAGE);
        if (whole > this.dropped) dropCachedPages(fd, this.dropped, whole - this.dropped);
        this.dropped = Math.max(this.dropped, whole);
      },
      (err: unknown) => {
        this.syncing = null;
        this.dirty = true;
        throw err;
      },
    );
    return this.syncing;
  }

  /**
   * Stops writing at once; then, off the event loop, syncs what is unsynced (unless `async`) after any
   * sync already running, and closes the descriptor. Resolves when closed; a failed sync rejects.
   */
  close(mode: SyncMode): Promise<void> {
    if (this.fd === null) return this.closing ?? Promise.resolve();
    const fd = this.fd;
    this.fd = null;
    if (this.state === 'active') this.state = 'closed';
    this.closing = (async () => {
      try {
        while (this.syncing) await this.syncing.catch(() => undefined);
        if (this.dirty && mode !== 'async') await this.startSync(fd, mode);
      } finally {
        closeSync(fd);
      }
    })();
    return this.closing;
  }
}
