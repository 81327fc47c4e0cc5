/**
 * Where a measurement's rows are: Parquet files from the manifest plus rows still in the write
 * buffers. Both calls are synchronous on purpose: the planner reads the manifest and the buffer
 * snapshot in the same tick, so a flush cannot move rows between them and every row is seen once.
 */
import { isAbsolute, resolve } from 'node:path';
import type { DatabaseStore, FileManifestStore } from '../catalog/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import type { FileReaper, ObjectStore } from '../storage/index.ts';
import { setBounded } from '../lib/bounded-map.ts';

/** One data file as the planner needs it. Times are epoch µs, inclusive. */
export interface SourceFile {
  /** Storage key (relative to the storage root); `localPaths` turns it into a file DuckDB reads. */
  key: string;
  minTime: number;
  maxTime: number;
  rows: number;
  bytes: number;
}

/** The planner's view of storage. */
export interface TableSource {
  /** Files of one measurement overlapping [minTime, maxTime] (either bound optional). */
  files(database: string, measurement: string, minTime?: number, maxTime?: number): SourceFile[];
  /** Rows acknowledged but not yet in any listed file. */
  buffered(database: string, measurement: string): ColumnBatch[];
  /**
   * Marks planned files, and the buffered rows planned in this tick, as read by a query until the
   * returned function is called. Synchronous, and called in the planning tick, so a compaction or
   * delete cannot delete a planned file, nor a flush hand the buffered rows' memory to a new write,
   * before they are read.
   */
  lease(keys: readonly string[]): () => void;
  /** Local paths DuckDB reads for `keys`, in order (remote objects come through the read cache). */
  localPaths(keys: readonly string[]): Promise<string[]>;
  /** Every database name known (catalog, files, buffers), sorted. */
  databases(): string[];
  /** Measurements with files or buffered rows, optionally within one database, sorted. */
  measurements(database?: string): { database: string; measurement: string }[];
  /** Folder every data file lives under (DuckDB may read only there). */
  readonly root: string;
}

/** The write buffers as the query side sees them. */
export interface BufferedRows {
  snapshot(database: string, measurement: string): ColumnBatch[];
  /** Keeps the rows of this tick's snapshots readable until the returned function is called. */
  pin(): () => void;
  measurements(database?: string): { database: string; measurement: string }[];
}

/** TableSource over the file manifest, the local storage root and (optionally) the write buffers. */
export class ManifestTableSource implements TableSource {
  readonly root: string;
  /** Every file of recently planned measurements (manifest order), as of manifest version `listedAt`. */
  private readonly listed = new Map<string, readonly SourceFile[]>();
  private listedAt = -1;

  constructor(
    private readonly manifest: FileManifestStore,
    root: string,
    private readonly buffers: BufferedRows | null = null,
    private readonly databaseStore: DatabaseStore | null = null,
    /** The store and reaper of a running server; without them keys are paths under `root`, unleased. */
    private readonly storage: { store: Pick<ObjectStore, 'localPath'>; reaper: Pick<FileReaper, 'acquire'> } | null = null,
  ) {
    this.root = isAbsolute(root) ? root : resolve(root);
  }

  lease(keys: readonly string[]): () => void {
    const files = this.storage ? this.storage.reaper.acquire(keys) : () => {};
    const rows = this.buffers ? this.buffers.pin() : () => {};
    return () => {
      files();
      rows();
    };
  }

  localPaths(keys: readonly string[]): Promise<string[]> {
    const storage = this.storage;
    if (!storage) return Promise.resolve(keys.map((k) => resolve(this.root, k)));
    return Promise.all(keys.map((k) => storage.store.localPath(k)));
  }

  files(database: string, measurement: string, minTime = Number.MIN_SAFE_INTEGER, maxTime = Number.MAX_SAFE_INTEGER): SourceFile[] {
    // A manifest read costs about a quarter millisecond even for a few dozen files, once per query;
    // the file lists only change when the manifest does.
    if (this.listedAt !== this.manifest.version) {
      this.listed.clear();
      this.listedAt = this.manifest.version;
    }
    const key = `${database}\u0000${measurement}`;
    let all = this.listed.get(key);
    if (!all) {
      all = this.manifest.list({ database, measurement }).map((f) => ({ key: f.path, minTime: f.minTime, maxTime: f.maxTime, rows: f.rows, bytes: f.bytes }));
      setBounded(this.listed, key, all, MAX_LISTED);
    }
    return all.filter((f) => f.maxTime >= minTime && f.minTime <= maxTime);
  }

  buffered(database: string, measurement: string): ColumnBatch[] {
    return this.buffers?.snapshot(database, measurement) ?? [];
  }

  databases(): string[] {
    const names = new Set<string>((this.databaseStore?.list() ?? []).map((d) => d.name));
    for (const m of this.measurements()) names.add(m.database);
    return [...names].sort();
  }

  measurements(database?: string): { database: string; measurement: string }[] {
    const seen = new Map<string, { database: string; measurement: string }>();
    for (const m of [...this.manifest.measurements(database), ...(this.buffers?.measurements(database) ?? [])]) seen.set(`${m.database}\u0000${m.measurement}`, m);
    return [...seen.values()].sort((a, b) => (a.database === b.database ? cmp(a.measurement, b.measurement) : cmp(a.database, b.database)));
  }
}

const MAX_LISTED = 256;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
