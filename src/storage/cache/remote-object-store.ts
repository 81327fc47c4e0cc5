/**
 * An ObjectStore over a cloud backend (S3, Azure): keys live under an optional prefix so several
 * servers can share a bucket, and `localPath` serves queries from the local ReadCache.
 *
 * Freshness: a cached copy is used only after a HEAD confirms its ETag, unless it was confirmed within
 * `revalidateMs` (default 0: every `localPath` of a cached object costs one HEAD, about one round trip,
 * and never a stale read even when another server rewrites the object). A miss costs one GET, no HEAD.
 * Our own puts and deletes update the cache directly; a flushed file is adopted into the cache, so
 * fresh data is queried without any download.
 */
import { rm } from 'node:fs/promises';
import { AppError, notFound } from '../../lib/errors.ts';
import { assertKey, assertPrefix } from '../keys.ts';
import type { ObjectInfo, ObjectStore, PutSource } from '../object-store.ts';
import type { ReadCache } from './read-cache.ts';
import type { RemoteBackend, RemoteObject } from './remote-backend.ts';
import { StorageHealth } from './storage-health.ts';

/** Options of RemoteObjectStore. */
export interface RemoteStoreOptions {
  /** Key prefix inside the bucket or container (`team-a` or `team-a/`); empty for none. */
  prefix?: string;
  /** How long a confirmed ETag is trusted without another HEAD (ms). */
  revalidateMs?: number;
}

/** ObjectStore over a RemoteBackend plus a local ReadCache; see the file comment. */
export class RemoteObjectStore implements ObjectStore {
  readonly backend: string;
  readonly health: StorageHealth;
  private readonly prefix: string;
  private readonly revalidateMs: number;

  constructor(
    private readonly remote: RemoteBackend,
    private readonly cache: ReadCache,
    opts: RemoteStoreOptions = {},
  ) {
    this.backend = remote.backend;
    this.prefix = normalizePrefix(opts.prefix ?? '');
    this.revalidateMs = opts.revalidateMs ?? 0;
    this.health = new StorageHealth(remote.backend, remote.location + (this.prefix ? `/${this.prefix}` : ''));
  }

  /** The normalized key prefix (`team-a/`, or empty) every key of this store lives under. */
  get keyPrefix(): string {
    return this.prefix;
  }

  async put(key: string, source: PutSource): Promise<ObjectInfo> {
    const full = this.full(key);
    const info = await this.track(this.remote.upload(full, source));
    if (source instanceof Uint8Array) this.cache.invalidate(key);
    // The uploaded file becomes the cached copy; if it cannot (another filesystem), it is just removed.
    else await this.cache.adopt(key, source.file, info.etag).catch(() => rm(source.file, { force: true }));
    return this.info(info);
  }

  async get(key: string): Promise<Uint8Array> {
    return this.track(this.remote.get(this.full(key)), key);
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    return this.track(this.remote.stream(this.full(key)), key);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const objects = await this.track(this.remote.list(this.prefix + assertPrefix(prefix)));
    const out: ObjectInfo[] = [];
    for (const o of objects) {
      const info = this.info(o);
      // Objects other tools put beside ours with names that are not valid keys are not ours to serve.
      if (isKey(info.key)) out.push(info);
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const o = await this.track(this.remote.head(this.full(key)));
    return o && this.info(o);
  }

  async delete(key: string): Promise<boolean> {
    const existed = await this.track(this.remote.delete(this.full(key)));
    this.cache.invalidate(key);
    return existed;
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.track(this.remote.deleteMany(keys.map((k) => this.full(k))));
    for (const key of keys) this.cache.invalidate(key);
  }

  async localPath(key: string): Promise<string> {
    const full = this.full(key);
    const checked = this.cache.checkedAt(key);
    if (checked !== null) {
      if (checked > 0 && Date.now() - checked < this.revalidateMs) return this.cache.hit(key, false)!;
      const head = await this.track(this.remote.head(full));
      if (!head) {
        this.cache.invalidate(key);
        throw missing(key);
      }
      if (this.cache.holds(key, head.etag)) {
        const file = this.cache.hit(key, true);
        if (file) return file;
      }
    }
    return this.track(this.cache.fill(key, (file) => this.remote.download(full, file)), key);
  }

  scratchPath(suffix: string): string {
    return this.cache.scratchPath(suffix);
  }

  /** One cheap authenticated call; the outcome lands in `health`. Never throws. */
  async probe(): Promise<void> {
    await this.track(this.remote.probe()).catch(() => undefined);
  }

  private full(key: string): string {
    return this.prefix + assertKey(key);
  }

  private info(o: RemoteObject): ObjectInfo {
    return { key: o.key.slice(this.prefix.length), bytes: o.bytes, modifiedMs: o.modifiedMs };
  }

  /** Records the outcome in `health`; a "does not exist" names the caller's key, not the prefixed one. */
  private async track<T>(work: Promise<T>, key?: string): Promise<T> {
    try {
      const out = await work;
      this.health.succeeded();
      return out;
    } catch (err) {
      this.health.failed(err);
      if (key !== undefined && err instanceof AppError && err.kind === 'not_found') throw missing(key);
      throw err;
    }
  }
}

const missing = (key: string) => notFound(`cannot read object '${key}': it does not exist`);

function isKey(key: string): boolean {
  try {
    assertKey(key);
    return true;
  } catch {
    return false;
  }
}

/** `a/b`, `/a/b/` and `a/b/` all become `a/b/`; empty stays empty. */
function normalizePrefix(prefix: string): string {
  const p = prefix.replace(/^\/+|\/+$/g, '');
  return p === '' ? '' : `${assertKey(p)}/`;
}
