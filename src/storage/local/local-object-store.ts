/**
 * The local-disk ObjectStore. A put writes (or receives) a complete file under `<root>/.tmp/`,
 * fsyncs it (unless its writer already did), renames it into place (atomic on one filesystem) and fsyncs the folder, so a crash
 * leaves either no file or the whole file under its final name.
 */
import { mkdir, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { notFound } from '../../lib/errors.ts';
import { assertKey, assertPrefix, uniqueNanos } from '../keys.ts';
import type { ObjectInfo, ObjectStore, PutSource } from '../object-store.ts';
import { syncFile } from '../../lib/page-cache.ts';

const SCRATCH = '.tmp';

/** How a local store writes. */
export interface LocalStoreOptions {
  /** Drop each file's pages from the OS page cache once it is on disk (see lib/page-cache.ts). */
  dropPageCache?: boolean;
}

/** Files on a local folder; `root` is created on first use. */
export class LocalObjectStore implements ObjectStore {
  readonly backend = 'local';
  readonly root: string;
  private readonly scratchDir: string;
  private readonly dropPages: boolean;

  constructor(root: string, opts: LocalStoreOptions = {}) {
    this.root = resolve(root);
    this.scratchDir = join(this.root, SCRATCH);
    this.dropPages = opts.dropPageCache ?? false;
  }

  /** Creates the root and an empty scratch folder (left-over partial files from a crash are removed). */
  async open(): Promise<this> {
    await rm(this.scratchDir, { recursive: true, force: true });
    await mkdir(this.scratchDir, { recursive: true });
    return this;
  }

  async put(key: string, source: PutSource): Promise<ObjectInfo> {
    const target = this.pathOf(key);
    let tmp: string;
    if (source instanceof Uint8Array) {
      tmp = this.scratchPath('put');
      await writeFile(tmp, source);
    } else tmp = source.file;
    if (source instanceof Uint8Array || !source.synced) await syncFile(tmp, this.dropPages);
    await mkdir(dirname(target), { recursive: true });
    await rename(tmp, target);
    await syncFile(dirname(target));
    const st = await stat(target);
    return { key, bytes: st.size, modifiedMs: st.mtimeMs };
  }

  async get(key: string): Promise<Uint8Array> {
    const file = Bun.file(this.pathOf(key));
    if (!(await file.exists())) throw notFound(`cannot read object '${key}': it does not exist`);
    return new Uint8Array(await file.arrayBuffer());
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    const file = Bun.file(this.pathOf(key));
    if (!(await file.exists())) throw notFound(`cannot read object '${key}': it does not exist`);
    return file.stream();
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const dir = join(this.root, assertPrefix(prefix));
    let names: string[];
    try {
      names = await readdir(dir, { recursive: true });
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return [];
      throw err;
    }
    const out: ObjectInfo[] = [];
    for (const name of names.sort()) {
      const key = relative(this.root, join(dir, name)).split(sep).join('/');
      if (key === SCRATCH || key.startsWith(SCRATCH + '/')) continue;
      const st = await stat(join(dir, name)).catch(() => null);
      if (st?.isFile()) out.push({ key, bytes: st.size, modifiedMs: st.mtimeMs });
    }
    return out;
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const st = await stat(this.pathOf(key)).catch(() => null);
    return st?.isFile() ? { key, bytes: st.size, modifiedMs: st.mtimeMs } : null;
  }

  async delete(key: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(key));
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return false;
      throw err;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.delete(key);
  }

  async localPath(key: string): Promise<string> {
    return this.pathOf(key);
  }

  scratchPath(suffix: string): string {
    return join(this.scratchDir, `${uniqueNanos()}-${suffix.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
  }

  /** Absolute path of a key; the key check keeps every path inside the root. */
  private pathOf(key: string): string {
    return join(this.root, assertKey(key));
  }
}

