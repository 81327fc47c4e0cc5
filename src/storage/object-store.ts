/**
 * The ObjectStore port: how data files are kept, whatever the backend. Keys are relative,
 * slash-separated paths (`<db>/<m>/YYYY/MM/DD/HH/<file>.parquet`) checked by `assertKey`.
 */

/** What a listing or `stat` tells about one object. */
export interface ObjectInfo {
  key: string;
  bytes: number;
  /** Last modification, epoch milliseconds. */
  modifiedMs: number;
  /** Which tier holds it, when the store has two (tiering); absent otherwise. */
  tier?: 'hot' | 'cold';
}

/**
 * The body of a `put`: bytes in memory, or a local file the store takes over (moved when it can, else
 * copied); `synced`: the file's bytes are already on disk (fsynced by its writer), so a local store
 * need not sync the file again before moving it into place.
 */
export type PutSource = Uint8Array | { file: string; synced?: boolean };

/** A place to keep data files: local disk now, S3 and Azure behind the same port later. */
export interface ObjectStore {
  /** Backend name as /health shows it (`local`, `s3`, `azure`). */
  readonly backend: string;
  /** Stores an object atomically: readers see the old object or the whole new one, never a part. */
  put(key: string, source: PutSource): Promise<ObjectInfo>;
  /** The whole object; throws AppError not_found when it does not exist. */
  get(key: string): Promise<Uint8Array>;
  /** The object as a byte stream; throws AppError not_found when it does not exist. */
  stream(key: string): Promise<ReadableStream<Uint8Array>>;
  /** Every object whose key starts with `prefix` (a folder prefix ending in `/`, or `''` for all), in key order. */
  list(prefix: string): Promise<ObjectInfo[]>;
  /** Size and age of one object, or null when it does not exist. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Removes an object; false when it did not exist. */
  delete(key: string): Promise<boolean>;
  /**
   * Removes objects whether or not they exist, in as few requests as the backend allows (S3: one per
   * 1,000 keys, with no check of each key first); throws when one could not be removed.
   */
  deleteMany(keys: readonly string[]): Promise<void>;
  /** A local file path DuckDB can read for `key` (the file itself on local disk; a cached copy for remote stores). */
  localPath(key: string): Promise<string>;
  /**
   * A fresh local path where a writer (DuckDB's COPY) may create a file that is then handed to `put`
   * as `{file}`. On local disk it lies on the same filesystem, so the `put` is a rename.
   */
  scratchPath(suffix: string): string;
}
