/**
 * The local read cache of a remote store: DuckDB reads only local files, so each object a query scans
 * is kept as `<dir>/objects/<key folder>/<etag>~<key name>`. The ETag in the name means a rewritten
 * object gets a new file and is never served from the old one; the files survive a restart (the index
 * is rebuilt from the names). The total is bounded by `maxBytes`, least recently used first out.
 *
 * Eviction never removes a file a query may be reading: it skips keys `inUse` reports (the FileReaper
 * leases planned files) and files handed out within `graceMs` (a caller between `localPath` and its
 * lease). Beyond that, Linux keeps an unlinked file readable through the handles already open. A
 * single object larger than the bound is still served, then evicted first.
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { uniqueNanos } from '../keys.ts';

/** Construction options of ReadCache. */
export interface ReadCacheOptions {
  /** storage.cache_path: objects/ and tmp/ live below it. */
  dir: string;
  /** storage.cache_size in bytes. */
  maxBytes: number;
  /** True while a query holds `key` (FileReaper.inUse); such files are not evicted. */
  inUse?: (key: string) => boolean;
  /** Files handed out this recently are not evicted either (ms). */
  graceMs?: number;
}

interface Entry {
  key: string;
  etag: string;
  file: string;
  bytes: number;
  /** When the ETag was last confirmed against the store (0: never, must be checked). */
  checkedAt: number;
  handedAt: number;
}

/** Counters for tests and diagnostics. */
export interface ReadCacheStats {
  files: number;
  bytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/** An LRU set of local copies of remote objects; see the file comment. */
export class ReadCache {
  /** Folder under which every cached copy lies (DuckDB's allowed directory). */
  readonly root: string;
  private readonly tmpDir: string;
  /** Map order is recency order: oldest first. */
  private readonly entries = new Map<string, Entry>();
  private readonly filling = new Map<string, Promise<string>>();
  /** Replaced copies that may still be read: removed by a later eviction pass. */
  private readonly retired = new Map<string, Entry>();
  /** Bumped by `invalidate`, so a download that started before it is not trusted after it. */
  private readonly generation = new Map<string, number>();
  private total = 0;
  private readonly counts = { hits: 0, misses: 0, evictions: 0 };

  constructor(private readonly opts: ReadCacheOptions) {
    this.root = join(opts.dir, 'objects');
    this.tmpDir = join(opts.dir, 'tmp');
  }

  /** Creates the folders, drops partial downloads and indexes the copies a previous run left. */
  async open(): Promise<this> {
    await rm(this.tmpDir, { recursive: true, force: true });
    await mkdir(this.tmpDir, { recursive: true });
    await mkdir(this.root, { recursive: true });
    const found: (Entry & { mtime: number })[] = [];
    for (const name of await readdir(this.root, { recursive: true })) {
      const file = join(this.root, name);
      const st = await stat(file).catch(() => null);
      if (!st?.isFile()) continue;
      const rel = relative(this.root, file).split(sep).join('/');
      const base = rel.slice(rel.lastIndexOf('/') + 1);
      const cut = base.indexOf('~');
      if (cut <= 0) {
        await rm(file, { force: true });
        continue;
      }
      const key = rel.slice(0, rel.length - base.length) + base.slice(cut + 1);
      // Unconfirmed (checkedAt 0): the object may have changed while this process was down.
      found.push({ key, etag: base.slice(0, cut), file, bytes: st.size, checkedAt: 0, handedAt: 0, mtime: st.mtimeMs });
    }
    for (const e of found.sort((a, b) => a.mtime - b.mtime)) {
      const old = this.entries.get(e.key);
      if (old) this.retire(old);
      this.entries.set(e.key, { key: e.key, etag: e.etag, file: e.file, bytes: e.bytes, checkedAt: 0, handedAt: 0 });
      this.total += e.bytes;
    }
    await this.evict();
    return this;
  }

  /** A fresh path under the cache's tmp folder (same filesystem as the copies, so adopting is a rename). */
  scratchPath(suffix: string): string {
    return join(this.tmpDir, `${uniqueNanos()}-${suffix.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
  }

  /** When the cached copy of `key` was last confirmed current (0: must be checked), or null when there is none. */
  checkedAt(key: string): number | null {
    return this.entries.get(key)?.checkedAt ?? null;
  }

  /** True when the cached copy of `key` is the object version with `etag`. */
  holds(key: string, etag: string): boolean {
    return this.entries.get(key)?.etag === etagToken(etag);
  }

  /** Hands out the cached copy of `key` (most recently used now); `confirmed` records a fresh ETag check. */
  hit(key: string, confirmed: boolean): string | null {
    const e = this.entries.get(key);
    if (!e) return null;
    this.counts.hits++;
    const now = Date.now();
    if (confirmed) e.checkedAt = now;
    e.handedAt = now;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.file;
  }

  /** Downloads `key` through `download(tmpFile)` (one download per key at a time) and returns the local copy. */
  fill(key: string, download: (file: string) => Promise<{ etag: string }>): Promise<string> {
    const running = this.filling.get(key);
    if (running) return running;
    this.counts.misses++;
    const gen = this.generation.get(key) ?? 0;
    const p = (async () => {
      const tmp = this.scratchPath('download');
      try {
        const { etag } = await download(tmp);
        return await this.place(key, tmp, etag, (this.generation.get(key) ?? 0) === gen);
      } finally {
        await rm(tmp, { force: true });
      }
    })().finally(() => this.filling.delete(key));
    this.filling.set(key, p);
    return p;
  }

  /** Takes over `file` (just uploaded as `key` with `etag`) as the cached copy, so the next read needs no download. */
  async adopt(key: string, file: string, etag: string): Promise<void> {
    this.invalidate(key);
    await this.place(key, file, etag, true);
  }

  /** Forgets the copy of `key` (our own rewrite or delete); a file still being read is removed later. */
  invalidate(key: string): void {
    this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
    this.retire(e);
    void this.evict();
  }

  /** Current counters. */
  stats(): ReadCacheStats {
    return { files: this.entries.size, bytes: this.total, ...this.counts };
  }

  private async place(key: string, tmp: string, etag: string, trusted: boolean): Promise<string> {
    const safe = etagToken(etag);
    const slash = key.lastIndexOf('/');
    const file = join(this.root, key.slice(0, slash + 1), `${safe}~${key.slice(slash + 1)}`);
    await mkdir(dirname(file), { recursive: true });
    const bytes = (await stat(tmp)).size;
    await rename(tmp, file);
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.total -= old.bytes;
      if (old.file !== file) this.retire(old);
    }
    const now = Date.now();
    this.entries.set(key, { key, etag: safe, file, bytes, checkedAt: trusted ? now : 0, handedAt: now });
    this.total += bytes;
    await this.evict(key);
    return file;
  }

  private retire(e: Entry): void {
    this.retired.set(e.file, e);
  }

  private busy(e: Entry, now: number): boolean {
    return now - e.handedAt < (this.opts.graceMs ?? 10_000) || (this.opts.inUse?.(e.key) ?? false);
  }

  /** Removes retired copies nobody reads, then least recently used copies (never `keep`) until the total fits. */
  private async evict(keep?: string): Promise<void> {
    const now = Date.now();
    for (const [file, e] of [...this.retired]) {
      // The same file may be current again (the same content re-placed): then it simply stays.
      const current = this.entries.get(e.key)?.file === file;
      if (!current && this.busy(e, now)) continue;
      this.retired.delete(file);
      if (!current) await rm(file, { force: true });
    }
    for (const e of [...this.entries.values()]) {
      if (this.total <= this.opts.maxBytes) break;
      if (e.key === keep || this.busy(e, now)) continue;
      this.entries.delete(e.key);
      this.total -= e.bytes;
      this.counts.evictions++;
      await rm(e.file, { force: true });
    }
  }
}

/** An ETag as it appears in a file name: quotes and anything unsafe dropped. */
function etagToken(etag: string): string {
  return etag.replace(/[^A-Za-z0-9_-]/g, '') || 'none';
}
