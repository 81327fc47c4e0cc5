/**
 * Bulk imports (CSV, Parquet, line-protocol files, TLE backfills), all or nothing per request:
 * 1. the upload is streamed to a scratch file (decompressed, size-capped; never whole in memory);
 * 2. the file is read completely into staging tables on the import DuckDB instance (import-engine.ts),
 *    and every check runs there: any bad row fails the request before anything is stored;
 * 3. the staged rows are committed as hourly Parquet files in one manifest transaction
 *    (import-commit.ts). Imports bypass the write buffers and the WAL: the files are durable before
 *    the response, which is what the WAL would otherwise provide.
 */
import { rm } from 'node:fs/promises';
import type { BufferSet, WriteService } from '../../buffer/index.ts';
import type { DatabaseStore, FileManifestStore } from '../../catalog/index.ts';
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { multipartBoundary, spoolToFile, type CsvOptions, type ParquetOptions, type Precision } from '../../ingest/index.ts';
import { messageOf } from '../../lib/errors.ts';
import { assertDatabaseName, assertMeasurementName } from '../../lib/names.ts';
import { assertAllowed, type TableAccess } from '../../lib/table-access.ts';
import type { Logger, SvcMetrics } from '../../observability/index.ts';
import type { ParquetCompression } from '../../parquet/index.ts';
import type { ObjectStore } from '../../storage/index.ts';
import { ImportEngine } from './import-engine.ts';
import { commitStaged, type StagedMeasurement } from './import-commit.ts';
import { importResult, type ImportResult } from './import-result.ts';
import { stageFile } from './stage-file.ts';

/** Largest accepted import body, received and decompressed (spec: Limits, import body). */
export const IMPORT_MAX_BYTES = 500 * 1024 * 1024;

/** Collaborators, built by main.ts. Imports run on a DuckDB instance of their own (import-engine.ts). */
export interface ImportDeps {
  store: ObjectStore;
  manifest: FileManifestStore;
  databases: DatabaseStore;
  buffers: BufferSet;
  writes: WriteService;
  metrics: SvcMetrics;
  logger: Logger;
  compression: ParquetCompression;
  maxBytes?: number;
  /** DuckDB threads of the import instance (0 or omitted: every core). */
  threads?: number;
}

/** The format of an import and its options. */
export type ImportFormatOptions =
  | { format: 'csv'; measurement: string; csv: CsvOptions }
  | { format: 'parquet'; measurement: string; parquet: ParquetOptions }
  | { format: 'lp'; precision: Precision }
  | { format: 'tle'; measurement: string };

/** One import request: target database, the body stream and its content type, the format options. */
export type ImportRequest = ImportFormatOptions & {
  database: string;
  /** What the caller may write: every imported measurement is checked before anything is committed. */
  access: TableAccess;
  body: ReadableStream<Uint8Array> | null;
  contentType: string | undefined;
};

/** Connections used to write one import's hourly files in parallel. */
const WRITERS = 2;
let serial = 0;

/** Runs imports; at most one stages and commits at a time (each uses every core), uploads overlap. */
export class ImportService {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly engine: ImportEngine;

  constructor(private readonly deps: ImportDeps) {
    this.engine = new ImportEngine(deps.threads);
  }

  /** Waits for the import being staged or committed, then closes the import DuckDB instance (shutdown). */
  async stop(): Promise<void> {
    await this.tail.catch(() => undefined);
    await this.engine.close();
  }

  /** Imports one upload; AppError invalid (400) names the row or line at fault, and then nothing was stored. */
  async run(req: ImportRequest): Promise<ImportResult> {
    const started = performance.now();
    assertDatabaseName(req.database);
    if (req.format !== 'lp') assertAllowed(req.access, 'write', req.database, [assertMeasurementName(req.measurement)]);
    const path = this.deps.store.scratchPath(`import-${req.format}`);
    try {
      const boundary = multipartBoundary(req.contentType);
      const spooled = await spoolToFile(req.body, path, {
        maxBytes: this.deps.maxBytes ?? IMPORT_MAX_BYTES,
        multipart: boundary ? { boundary, field: 'file' } : null,
      });
      this.deps.metrics.ingestBytes.inc(spooled.received);
      const spooledAt = performance.now();
      const result = await this.exclusive(() => this.stageAndCommit(req, path));
      this.deps.metrics.ingestRecords.inc(result.rows);
      this.deps.metrics.ingestBatches.inc();
      const done = importResult(req.database, result, performance.now() - started);
      this.deps.logger.info('import committed', {
        format: req.format,
        database: req.database,
        measurement: done.result.measurement,
        rows: result.rows,
        files: result.files.length,
        bytes: spooled.bytes,
        upload_ms: Math.round(spooledAt - started),
        ...result.timings,
      });
      return done;
    } catch (err) {
      this.deps.metrics.ingestErrors.inc();
      throw err;
    } finally {
      await rm(path, { force: true }).catch(() => undefined);
    }
  }

  private async stageAndCommit(req: ImportRequest, path: string) {
    const conns: DuckDBConnection[] = [];
    const tables: string[] = [];
    try {
      const instance = await this.engine.get();
      for (let i = 0; i < WRITERS; i++) conns.push(await instance.connect());
      const conn = conns[0]!;
      // Zone-less time text is UTC, whatever the host's zone (SESSION: other connections keep theirs).
      await conn.run(`SET SESSION TimeZone = 'UTC'`);
      const prefix = `import_${process.pid}_${++serial}`;
      const t0 = performance.now();
      const staged: StagedMeasurement[] = await stageFile(conn, req, path, prefix, this.deps.writes, tables);
      const t1 = performance.now();
      // Line-protocol files name their measurements inside; any forbidden one refuses the whole import.
      assertAllowed(req.access, 'write', req.database, staged.map((s) => s.measurement));
      this.deps.databases.ensure(req.database);
      const summary = await commitStaged(this.deps, conns, req.database, staged);
      const columns = [...new Set(staged.flatMap((s) => s.table.columns.map((c) => c.name)))];
      const timings = { stage_ms: Math.round(t1 - t0), commit_ms: Math.round(performance.now() - t1) };
      return { ...summary, measurements: staged.map((s) => s.measurement), columns, timings };
    } finally {
      for (const t of tables) await conns[0]?.run(`DROP TABLE IF EXISTS "${t}"`).catch((err) => this.deps.logger.warn('cannot drop import table', { table: t, error: messageOf(err) }));
      for (const c of conns) c.closeSync();
    }
  }

  /** Runs `fn` after every earlier import's stage-and-commit step. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
