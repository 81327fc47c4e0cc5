/**
 * The write-ahead log: every accepted write is appended (one write of one framed entry) before the
 * write is acknowledged; a 100 ms ticker syncs per `sync_mode`, rotates by age and retires segments.
 * A segment file is removed once every entry in it has been released (its rows are in flushed Parquet
 * files) and every older segment is gone; see replay.ts for why oldest first.
 */
import { accessSync, constants, mkdirSync, promises as fsp, renameSync, unlinkSync } from 'node:fs';
import { AppError, messageOf, StartupError } from '../lib/errors.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import type { Logger } from '../observability/index.ts';
import { FILE_HEADER, frameData, frameRelease, type EntryId } from './frame.ts';
import { replaySegments, type ReplayHost } from './replay.ts';
import { Segment } from './segment.ts';
import { entryId, type CleanupResult, type ReplayApply, type ReplayResult, type WalFiles, type WalHealth, type WalMetrics, type WalOptions, type WalStatus, type WalTicket, type WriteAheadLog } from './types.ts';
import { listFiles, removeRecovered, scanDirectory } from './wal-files.ts';
import { buildHealth, buildStatus, type WalCounters } from './wal-report.ts';

const DEFAULT_TICK_MS = 100;
const DEFAULT_IDLE_ROTATE_MS = 5_000;

/** An enabled write-ahead log over one directory. */
export class Wal implements WriteAheadLog {
  readonly enabled = true;
  /** Segments still on disk and tracked: the active one, closed ones and replayed ones, by sequence. */
  private readonly live = new Map<number, Segment>();
  private active: Segment | null = null;
  private nextSeq: number;
  private unreplayed: number[];
  /** The entries issued and not released, by entryId. */
  private readonly outstanding = new Set<string>();
  private releases: EntryId[] = [];
  private releaseQueued = false;
  private dirUnsynced = false;
  private closed = false;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly counters: WalCounters = {
    entries: 0, bytes: 0, records: 0, syncs: 0, rotations: 0,
    lastSyncAt: null, lastError: null, lastErrorAt: null, recovery: null,
  };

  private constructor(
    private readonly opts: Required<WalOptions>,
    private readonly metrics: WalMetrics,
    private readonly logger: Logger,
    found: { segments: number[]; recovered: number[] },
  ) {
    this.unreplayed = found.segments;
    this.nextSeq = Math.max(0, ...found.segments, ...found.recovered) + 1;
    this.timer = setInterval(() => this.tick(), opts.tickMs);
    this.timer.unref?.();
  }

  /** Opens (creating if needed) the WAL directory; existing `*.wal` files wait for `replay`. */
  static async open(options: WalOptions, metrics: WalMetrics, logger: Logger): Promise<Wal> {
    const opts = { tickMs: DEFAULT_TICK_MS, idleRotateMs: DEFAULT_IDLE_ROTATE_MS, ...options };
    try {
      mkdirSync(opts.directory, { recursive: true });
      accessSync(opts.directory, constants.W_OK | constants.R_OK);
    } catch (err) {
      throw new StartupError('wal', `cannot open WAL directory ${opts.directory}: ${messageOf(err)}`, { cause: err });
    }
    const found = scanDirectory(opts.directory);
    for (const name of found.foreign) logger.warn('wal directory holds a file that is not a svc segment; ignored', { file: name });
    const log = logger.child({ component: 'wal' });
    log.info('wal opened', { directory: opts.directory, sync_mode: opts.syncMode, files_to_replay: found.segments.length });
    return new Wal(opts, metrics, log, found);
  }

  /** Appends one write as a single entry; resolves once the entry is written (synced by the ticker). */
  async append(database: string, batches: ColumnBatch[]): Promise<WalTicket> {
    if (this.closed) throw new AppError('unavailable', 'cannot append to WAL: it is closed');
    let frame: Uint8Array | null = null;
    let seg: Segment;
    let offset: number;
    try {
      frame = frameData(database, batches);
      seg = this.segmentFor(frame.length);
      offset = seg.write(frame);
    } catch (err) {
      this.metrics.walFailedWrites.inc();
      this.noteError('append', err);
      // A failed write may leave the file unusable; the next append starts a fresh segment.
      if (frame && this.active && this.active.size > FILE_HEADER.length) this.rotate('write failure');
      throw new AppError('unavailable', `cannot append to WAL: ${messageOf(err)}`, { cause: err });
    }
    let records = 0;
    for (const b of batches) records += b.length;
    seg.pending++;
    seg.entries++;
    seg.records += records;
    this.counters.entries++;
    this.counters.bytes += frame.length;
    this.counters.records += records;
    this.metrics.walRecordsPreserved.inc(records);
    if (FILE_HEADER.length + frame.length > this.opts.maxSizeBytes) {
      // Written whole, in a segment of its own, and closed at once: never refused.
      this.metrics.walOversized.inc();
      this.rotate('oversized entry');
    }
    return this.issue(seg, offset, records);
  }

  /** Marks an append's rows as flushed. Unknown or already released tickets are ignored. */
  release(ticket: WalTicket): void {
    if (!this.outstanding.delete(entryId(ticket))) return;
    const seg = this.live.get(ticket.segment);
    if (seg) seg.pending--;
    this.releases.push({ segment: ticket.segment, offset: ticket.offset });
    // Releases made in one task (a flush releases many tickets) become one release record.
    if (!this.releaseQueued) {
      this.releaseQueued = true;
      queueMicrotask(() => this.writeReleases());
    }
  }

  /** True while the entry's rows are not all flushed (its ticket was issued and not released). */
  holds(entry: string): boolean {
    return this.outstanding.has(entry);
  }

  /** Replays the `*.wal` files found at open into `apply`, once; see replay.ts for the durability rules. */
  async replay(apply: ReplayApply): Promise<ReplayResult> {
    const seqs = this.unreplayed;
    this.unreplayed = [];
    const host: ReplayHost = {
      directory: this.opts.directory,
      logger: this.logger,
      metrics: this.metrics,
      register: (seg) => this.live.set(seg.seq, seg),
      ticket: (seg, offset, records) => {
        seg.pending++;
        seg.entries++;
        seg.records += records;
        return this.issue(seg, offset, records);
      },
      release: (t) => this.release(t),
      collect: () => this.collect(),
    };
    const started = Date.now();
    const result = await replaySegments(host, seqs, apply);
    this.counters.recovery = { ...result, completed_at: new Date().toISOString() };
    if (seqs.length > 0) this.logger.info('wal replay finished', { ...result, duration_ms: Date.now() - started });
    return result;
  }

  /** Configuration and counters (GET /api/wal/status). */
  status(): WalStatus {
    return buildStatus(this.opts, this.active, this.live, this.counters, this.metrics);
  }

  /** The files in the WAL directory (GET /api/wal/files). */
  files(): WalFiles {
    return listFiles(this.opts.directory, (seq) => {
      const seg = this.live.get(seq);
      if (seg) return { state: seg.state, pending: seg.pending };
      return this.unreplayed.includes(seq) ? { state: 'unreplayed', pending: 0 } : null;
    });
  }

  /** Whether appends and syncs are working (GET /api/wal/health). */
  health(): WalHealth {
    return buildHealth(this.opts, this.closed, this.active, this.live, this.counters);
  }

  /** Deletes `*.wal.recovered` files older than `maxAgeHours`; live segments are never touched. */
  async cleanup(maxAgeHours: number): Promise<CleanupResult> {
    return removeRecovered(this.opts.directory, maxAgeHours);
  }

  /** Writes pending release records, syncs and closes the active segment, removes what is fully released. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.writeReleases();
    this.closed = true;
    clearInterval(this.timer);
    const closing = [...this.live.values()].map((seg) => seg.close(this.opts.syncMode).catch((err) => this.noteError('sync', err)));
    this.active = null;
    await Promise.all(closing);
    this.collect();
    this.logger.info('wal closed', { live_files: this.live.size });
  }

  private issue(seg: Segment, offset: number, records: number): WalTicket {
    const ticket: WalTicket = Object.freeze({ segment: seg.seq, offset, records });
    this.outstanding.add(entryId(ticket));
    return ticket;
  }

  /** The active segment, rotated first when `bytes` more would pass the size limit. */
  private segmentFor(bytes: number): Segment {
    const a = this.active;
    if (a && a.size > FILE_HEADER.length && a.size + bytes > this.opts.maxSizeBytes) this.rotate('size');
    if (this.active) return this.active;
    const seg = Segment.create(this.opts.directory, this.nextSeq++);
    this.live.set(seg.seq, seg);
    this.active = seg;
    this.dirUnsynced = true;
    return seg;
  }

  private rotate(reason: string): void {
    const seg = this.active;
    if (!seg) return;
    this.active = null;
    this.counters.rotations++;
    this.logger.debug('wal segment rotated', { file: seg.name, reason, size: seg.size, pending_entries: seg.pending });
    seg.close(this.opts.syncMode).catch((err) => this.noteError('sync', err));
    this.collect();
  }

  /** Removes fully released segments from the oldest up to the first one still needed. */
  private collect(): void {
    const seqs = [...this.live.keys()].sort((a, b) => a - b);
    for (const seq of seqs) {
      const seg = this.live.get(seq)!;
      if (seg === this.active || seg.pending > 0 || seg.replaying) return;
      try {
        if (seg.state === 'replayed') renameSync(seg.path, `${seg.path}.recovered`);
        else unlinkSync(seg.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.noteError('remove', err);
          return;
        }
      }
      this.live.delete(seq);
      this.logger.debug(seg.state === 'replayed' ? 'wal file recovered' : 'wal file removed', { file: seg.name });
    }
  }

  private writeReleases(): void {
    this.releaseQueued = false;
    if (this.releases.length === 0 || this.closed) return;
    // Segments now fully released go first; ids in them need no record, as nothing can replay them.
    this.collect();
    const ids = this.releases.filter((id) => this.live.has(id.segment));
    this.releases = [];
    if (ids.length === 0) return;
    try {
      const frame = frameRelease(ids);
      this.segmentFor(frame.length).write(frame);
    } catch (err) {
      // Losing a release record can only make a later replay apply flushed rows again, never lose any.
      this.noteError('release record', err);
    }
    this.collect();
  }

  private tick(): void {
    const a = this.active;
    const now = Date.now();
    if (a && a.size > FILE_HEADER.length) {
      const age = now - a.createdAt;
      if (age >= this.opts.maxAgeMs) this.rotate('age');
      else if (a.pending === 0 && age >= this.opts.idleRotateMs) this.rotate('fully released');
    }
    if (this.opts.syncMode === 'async') return;
    const seg = this.active;
    if (seg?.unsynced) {
      seg.sync(this.opts.syncMode).then(
        () => {
          this.counters.syncs++;
          this.counters.lastSyncAt = Date.now();
        },
        (err) => this.noteError('sync', err),
      );
    }
    if (this.dirUnsynced) {
      // A new file's name must reach the disk too, or a power loss could lose the whole file.
      this.dirUnsynced = false;
      void syncDirectory(this.opts.directory).catch((err) => this.noteError('directory sync', err));
    }
  }

  private noteError(what: string, err: unknown): void {
    this.counters.lastError = `cannot ${what}: ${messageOf(err)}`;
    this.counters.lastErrorAt = Date.now();
    this.logger.error('wal error', { error: this.counters.lastError });
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fsp.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
