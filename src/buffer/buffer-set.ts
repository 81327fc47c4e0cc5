/**
 * Every write buffer of the process, keyed by (database, measurement), and the flush pipeline behind
 * them. Rows are visible to `snapshot` from the moment `append` returns until the synchronous step
 * that registers their files in the manifest, so a reader that takes the manifest and a snapshot in
 * one tick sees each row exactly once.
 */
import { ChangeHandedOn, type FileManifestStore, type ManifestFile } from '../catalog/index.ts';
import { batchBytes, type ColumnBatch, columnMemory } from '../ingest/index.ts';
import { messageOf, unavailable } from '../lib/errors.ts';
import { failpointError } from '../lib/failpoint.ts';
import { formatSize } from '../lib/sizes.ts';
import type { WrittenFile } from '../parquet/index.ts';
import type { BufferDeps, BufferOptions, BufferStats } from './buffer-options.ts';
import { type HourFileWriter, openFileWriters } from './file-writers.ts';
import { jobsDone, putJobFiles, sealJob, writeJobFiles, type FlushJob } from './flush-job.ts';
import { FlushQueue, retryDelayMs } from './flush-queue.ts';
import { MeasurementBuffer } from './measurement-buffer.ts';
import { blamesTheRows, writeSetAside } from './set-aside.ts';
import { TicketTracker } from './ticket-tracker.ts';

const keyOf = (database: string, measurement: string) => `${database}\n${measurement}`;

/** Per-measurement write buffers with size, age, schema-change, explicit and shutdown flushes. */
export class BufferSet {
  private readonly active = new Map<string, MeasurementBuffer>();
  private readonly inflight = new Map<string, FlushJob[]>();
  private readonly tickets: TicketTracker;
  private readonly queue: FlushQueue<HourFileWriter>;
  private readonly timer: ReturnType<typeof setInterval>;
  private counters = { flushes: 0, recordsWritten: 0, failures: 0, lastFlushAt: null as string | null, lastError: null as string | null, failing: false, setAside: 0, setAsideRows: 0 };
  /** Estimated bytes of every buffered and in-flight row (kept as a sum, so admission costs nothing per buffer). */
  private heldBytes = 0;
  /** A buffer this large is flushed whatever its row count: a quarter of the bound. */
  private readonly flushBytes: number;

  private constructor(
    private readonly deps: BufferDeps,
    private readonly opts: BufferOptions,
    private readonly writers: HourFileWriter[],
  ) {
    this.tickets = new TicketTracker(deps.onRelease ?? (() => {}));
    this.queue = new FlushQueue({
      runners: writers,
      capacity: opts.flushQueueSize,
      run: (writer, job) => this.runJob(writer, job),
      onFailure: (job, err) => this.writeFailed(job, err),
      onDepth: (d) => deps.metrics.bufferQueueDepth.set(d),
    });
    // The age check runs a few times per max age, so a buffer is flushed at most ~25% late.
    const tick = Math.max(10, Math.min(1000, Math.floor(opts.maxBufferAgeMs / 4)));
    this.timer = setInterval(() => this.sealOlderThan(opts.maxBufferAgeMs), tick);
    this.flushBytes = opts.maxBufferedBytes ? Math.max(1, Math.floor(opts.maxBufferedBytes / 4)) : Infinity;
  }

  /** Starts the flush workers (see file-writers.ts). */
  static async create(deps: BufferDeps, opts: BufferOptions): Promise<BufferSet> {
    const workers = { niceSteps: opts.flushWorkerNice ?? 0, settleFiles: opts.settleFilesInWorkers ?? false };
    const writers = await openFileWriters(opts.flushWorkers, deps.instance, deps.logger, (opts.workerThreads ?? true) ? workers : null);
    return new BufferSet(deps, opts, writers);
  }

  /**
   * Waits until the flush queue has room for more data; 503 (AppError unavailable) when it stays full,
   * or at once when the rows held have reached `maxBufferedBytes`, or while flushes fail and they have
   * reached `maxHeldRecords` (memory stays bounded). A write admitted below the bound may pass it by its own size.
   */
  async waitForRoom(): Promise<void> {
    const limit = this.opts.maxBufferedBytes;
    if (limit && this.heldBytes >= limit) {
      const why = this.counters.failing ? `flushes are failing (${this.counters.lastError ?? 'storage error'}) and ` : '';
      throw unavailable(`cannot accept write: ${why}buffered and in-flight rows hold ${formatSize(this.heldBytes)}, the most kept in memory (ingest.max_buffered_size = ${formatSize(limit)}); retry later`, this.counters.failing ? 5 : 1);
    }
    const cap = this.opts.maxHeldRecords;
    if (cap && this.counters.failing && this.bufferedRecords() >= cap)
      throw unavailable(`cannot accept write: flushes are failing (${this.counters.lastError ?? 'storage error'}) and ${this.bufferedRecords()} rows are waiting, the most kept in memory (ingest.max_buffer_size x ingest.shard_count = ${cap}); retry later`, 5);
    return this.queue.waitForRoom(this.opts.admissionTimeoutMs);
  }

  /**
   * Buffers rows (batches must not be mutated afterwards). A column whose type cannot join the
   * buffered rows flushes them first (schema change). `ticket` is released through `onRelease` once
   * every row of this append is in a registered file.
   */
  append(database: string, batches: readonly ColumnBatch[], ticket?: unknown): void {
    for (const batch of batches) {
      if (batch.length === 0) continue;
      const key = keyOf(database, batch.measurement);
      let buf = this.active.get(key);
      if (buf && buf.conflict(batch) !== null) {
        this.seal(key, buf);
        buf = undefined;
      }
      if (!buf) this.active.set(key, (buf = new MeasurementBuffer(database, batch.measurement)));
      const bytes = batchBytes(batch);
      buf.add(batch, bytes);
      this.heldBytes += bytes;
      const memory = columnMemory.claim(batch);
      if (memory !== null) buf.memory.push(memory);
      if (ticket !== undefined && !buf.tickets.has(ticket)) {
        buf.tickets.add(ticket);
        this.tickets.hold(ticket);
      }
      if (buf.rows >= this.opts.maxBufferSize || buf.bytes >= this.flushBytes) this.seal(key, buf);
    }
    if (ticket !== undefined) this.tickets.releaseIfUnheld(ticket);
    // At the bound, every buffer goes to the flush queue: only flushes free memory, and writes wait for them.
    const limit = this.opts.maxBufferedBytes;
    if (limit && this.heldBytes >= limit) for (const [key, buf] of [...this.active]) this.seal(key, buf);
  }

  /**
   * Keeps the column memory of rows a snapshot taken in this tick returns from being reused until the
   * returned function is called: a reader that holds a snapshot across awaits takes one.
   */
  pin(): () => void {
    return columnMemory.pin();
  }

  /** Rows acknowledged but not yet in a registered file (in flight first, then buffered), oldest first; do not mutate. */
  snapshot(database: string, measurement: string): ColumnBatch[] {
    const key = keyOf(database, measurement);
    const out: ColumnBatch[] = [];
    for (const job of this.inflight.get(key) ?? []) out.push(...job.batches);
    const buf = this.active.get(key);
    if (buf) out.push(...buf.batches);
    return out;
  }

  /** (database, measurement) pairs that have rows in buffers or in flight, optionally within one database. */
  measurements(database?: string): { database: string; measurement: string }[] {
    const keys = new Set([...this.active.keys(), ...this.inflight.keys()]);
    return [...keys]
      .map((k) => {
        const [db, m] = k.split('\n') as [string, string];
        return { database: db, measurement: m };
      })
      .filter((p) => database === undefined || p.database === database)
      .sort((a, b) => a.database.localeCompare(b.database) || a.measurement.localeCompare(b.measurement));
  }

  /** Flushes every buffer; resolves true when all of those rows are in registered files within `timeoutMs`. */
  async flushAll(timeoutMs = Infinity): Promise<boolean> {
    for (const [key, buf] of [...this.active]) this.seal(key, buf);
    return jobsDone([...this.inflight.values()].flat(), timeoutMs);
  }

  /**
   * Flushes the buffers of one database (of one measurement when given); resolves true when those rows
   * are in registered files within `timeoutMs`. Row rewrites (delete, retention) run after this.
   */
  async flushMeasurement(database: string, measurement?: string, timeoutMs = Infinity): Promise<boolean> {
    const mine = (key: string) => (measurement === undefined ? key.startsWith(`${database}\n`) : key === keyOf(database, measurement));
    for (const [key, buf] of [...this.active]) if (mine(key)) this.seal(key, buf);
    const jobs = [...this.inflight].filter(([key]) => mine(key)).flatMap(([, list]) => list);
    return jobsDone(jobs, timeoutMs);
  }

  /**
   * Discards every buffered row of a database being dropped and releases their WAL tickets (so a
   * restart cannot replay them). Rows already in flight are waited for: they land in files that the
   * caller deletes next. Resolves to the rows discarded, or -1 when the in-flight rows did not land
   * within `timeoutMs`.
   */
  async dropDatabase(database: string, timeoutMs = Infinity): Promise<number> {
    let rows = 0;
    for (const [key, buf] of [...this.active]) {
      if (buf.database !== database) continue;
      this.active.delete(key);
      rows += buf.rows;
      this.heldBytes -= buf.bytes;
      for (const t of buf.tickets) this.tickets.drop(t);
    }
    const jobs = [...this.inflight].filter(([key]) => key.startsWith(`${database}\n`)).flatMap(([, list]) => list);
    const landed = await jobsDone(jobs, timeoutMs);
    return landed ? rows : -1;
  }

  /**
   * Drops every buffered and in-flight row without flushing and without releasing its tickets: this
   * node lost the right to register files (a fenced ex-primary), and the new primary replays these rows
   * from the shared WAL. A flush already committing may still land; its rows then count as flushed.
   * Returns the rows dropped.
   */
  discardAll(): number {
    let rows = 0;
    for (const buf of this.active.values()) rows += buf.rows;
    this.active.clear();
    for (const list of this.inflight.values())
      for (const job of list) {
        job.abandoned = true;
        rows += job.rows;
        job.resolve();
      }
    this.inflight.clear();
    this.heldBytes = 0;
    return rows;
  }

  /** Shutdown: stops the age timer, flushes everything, then stops the flush workers. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flushAll();
    await this.queue.drained();
    this.queue.stop();
    await Promise.all(this.writers.map((w) => w.close()));
  }

  /** Rows acknowledged and not yet in a registered file (svc_buffer_records_buffered). */
  bufferedRecords(): number {
    const s = this.stats();
    return s.buffered_records + s.in_flight_records;
  }

  /** Current counters for the stats endpoints. */
  stats(): BufferStats {
    let buffered = 0;
    let bufferedBytes = 0;
    for (const b of this.active.values()) {
      buffered += b.rows;
      bufferedBytes += b.bytes;
    }
    let jobs = 0;
    let inflightRows = 0;
    for (const list of this.inflight.values()) for (const j of list) (jobs++, (inflightRows += j.rows));
    const c = this.counters;
    return {
      buffered_records: buffered,
      buffers: this.active.size,
      in_flight_jobs: jobs,
      in_flight_records: inflightRows,
      queue_depth: this.queue.depth,
      flushing: this.queue.active,
      flushes: c.flushes,
      records_written: c.recordsWritten,
      flush_failures: c.failures,
      last_flush_at: c.lastFlushAt,
      last_error: c.lastError,
      failing: c.failing,
      buffered_bytes: bufferedBytes,
      in_flight_bytes: this.heldBytes - bufferedBytes,
      max_buffered_bytes: this.opts.maxBufferedBytes || null,
      set_aside_batches: c.setAside,
      set_aside_records: c.setAsideRows,
    };
  }

  /** Estimated bytes of every buffered and in-flight row (svc_buffer_bytes). */
  bufferedBytes(): number {
    return this.heldBytes;
  }

  private sealOlderThan(ageMs: number): void {
    const now = performance.now();
    for (const [key, buf] of [...this.active]) if (now - buf.createdAt >= ageMs) this.seal(key, buf);
  }

  /** Moves a buffer's rows into a flush job (same tick: the rows stay visible to `snapshot`). */
  private seal(key: string, buf: MeasurementBuffer): void {
    this.active.delete(key);
    if (buf.rows === 0) return;
    const job = sealJob(this.deps.manifest, buf);
    const list = this.inflight.get(key);
    if (list) list.push(job);
    else this.inflight.set(key, [job]);
    this.queue.push(job);
  }

  /** The runner's part: the worker writes the files; landing them (fsyncs, renames) overlaps the worker's next job. */
  private async runJob(writer: HourFileWriter, job: FlushJob): Promise<void> {
    if (job.abandoned) return;
    failpointError('flush.write', job.measurement);
    const written = await writeJobFiles(writer, this.deps.store, job, this.opts.compression);
    void this.land(job, written);
  }

  /**
   * Puts a written job's files into storage and registers them. A measurement's flushes register in
   * seal (= seq) order: were a newer one registered and its WAL entries released first, a crash would
   * replay the older rows with a newer sequence than the newer file's. On failure the job is written
   * again from the start after a backoff, like the queue's own retries.
   */
  private async land(job: FlushJob, written: WrittenFile[]): Promise<void> {
    try {
      const files = await putJobFiles(this.deps.store, this.deps.manifest, job, written);
      const pending = this.inflight.get(keyOf(job.database, job.measurement)) ?? [];
      const earlier = pending.slice(0, Math.max(0, pending.indexOf(job)));
      if (earlier.length > 0) await Promise.all(earlier.map((j) => j.done));
      await this.register(job, files);
    } catch (err) {
      if (job.abandoned) return;
      // Recorded whole: the next primary registers these files, so writing them again would store the rows twice.
      if (err instanceof ChangeHandedOn) return void this.deps.logger.warn('flush recorded but not finished here; the next primary completes it', { database: job.database, measurement: job.measurement, rows: job.rows, error: messageOf(err) });
      job.attempts++;
      this.failed(job, err);
      setTimeout(() => this.queue.push(job), retryDelayMs(job.attempts));
    }
  }

  /** Registers a written job's files and releases what the rows held; on failure the files are deleted. */
  private async register(job: FlushJob, files: ManifestFile[]): Promise<void> {
    try {
      await this.deps.manifest.commit([], files, job.tickets);
    } catch (err) {
      if (!(err instanceof ChangeHandedOn)) await Promise.all(files.map((f) => this.deps.store.delete(f.path).catch(() => false)));
      throw err;
    }
    // Registered: from this tick on, readers find the rows in the manifest, so they leave the snapshot now.
    this.settle(job);
    this.counters.flushes++;
    this.counters.failing = false;
    this.counters.recordsWritten += job.rows;
    this.counters.lastFlushAt = new Date().toISOString();
    this.deps.metrics.bufferFlushes.inc();
    this.deps.metrics.bufferRecordsWritten.inc(job.rows);
    // Out of every snapshot from this tick on. A job written more than once may have had a write still
    // reading its rows when it was retried (a lost worker): its memory is left to the garbage collector.
    if (job.attempts === 0 && !job.abandoned) columnMemory.release(job.memory);
    job.resolve();
  }

  /** Takes a job's rows out of the snapshot and of the bytes held, and releases its WAL tickets (its rows are in files, or set aside). */
  private settle(job: FlushJob): void {
    const key = keyOf(job.database, job.measurement);
    const list = this.inflight.get(key) ?? [];
    const at = list.indexOf(job);
    if (at >= 0) {
      list.splice(at, 1);
      this.heldBytes -= job.bytes;
    }
    if (list.length === 0) this.inflight.delete(key);
    for (const t of job.tickets) this.tickets.drop(t);
  }

  /**
   * A failed attempt to write a job's files: true retries it (the queue's backoff); false when the
   * failure blamed the rows for the `flushMaxAttempts`-th time, and the rows go to a set-aside file.
   */
  private writeFailed(job: FlushJob, err: unknown): boolean {
    if (!job.abandoned && blamesTheRows(err)) job.rowFailures++;
    const dir = this.opts.setAsideDir;
    const last = dir !== undefined && job.rowFailures >= (this.opts.flushMaxAttempts ?? 3);
    this.failed(job, err, last ? 'cannot flush buffer; its rows are set aside' : undefined);
    if (job.abandoned) return false;
    if (!last) return true;
    void this.setAside(job, dir, err);
    return false;
  }

  /**
   * Writes a job's rows to a set-aside file and lets go of them: out of the snapshot (no longer
   * queryable), out of memory, their WAL entries released (a restart does not replay them). A cluster's
   * shared WAL counts an entry done only once a registered file covers it: a new primary replays such
   * rows once more (and sets them aside again). When writing the file fails, the job is retried.
   */
  private async setAside(job: FlushJob, dir: string, err: unknown): Promise<void> {
    const where = { database: job.database, measurement: job.measurement, rows: job.rows, attempts: job.attempts, reason: messageOf(err) };
    let path: string;
    try {
      path = await writeSetAside(dir, job, messageOf(err));
    } catch (e) {
      this.deps.logger.error('cannot set aside the rows of a failing flush; rows kept, will retry', { ...where, error: messageOf(e) });
      setTimeout(() => this.queue.push(job), retryDelayMs(job.attempts));
      return;
    }
    if (job.abandoned) return;
    this.settle(job);
    this.counters.setAside++;
    this.counters.setAsideRows += job.rows;
    this.deps.metrics.bufferBatchesSetAside.inc();
    this.deps.metrics.bufferRecordsSetAside.inc(job.rows);
    // The column memory is left to the garbage collector: a worker that died on these rows may still read them.
    job.resolve();
    this.deps.logger.error('set aside the rows of a flush that kept failing; they are no longer queryable and wait in the file for an operator', { ...where, file: path });
  }

  private failed(job: FlushJob, err: unknown, what = 'cannot flush buffer; rows kept, will retry'): void {
    this.counters.failures++;
    this.counters.failing = true;
    this.counters.lastError = messageOf(err);
    this.deps.metrics.bufferFlushFailures.inc();
    this.deps.logger.error(what, {
      database: job.database,
      measurement: job.measurement,
      rows: job.rows,
      attempt: job.attempts,
      error: messageOf(err),
    });
  }
}
