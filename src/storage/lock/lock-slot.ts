/**
 * Where the storage lock lives: a file in the local data folder, or one small object under the
 * bucket or container prefix. A slot only reads and conditionally writes its one record; the rules
 * (who holds it, when it is stale) are StorageLock's.
 */
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../lib/errors.ts';
import type { RemoteBackend } from '../cache/remote-backend.ts';

/** The lock's name in the data folder or under the prefix; not a `.parquet`, so no data listing takes it. */
export const LOCK_NAME = '.svc.lock';

/** One stored lock record and the version a conditional write must match. */
export interface SlotContent {
  text: string;
  version: string;
}

/** Read and conditionally write one lock record. */
export interface LockSlot {
  /** Where the lock is, for messages: a path or `s3://bucket/prefix/.svc.lock`. */
  readonly location: string;
  read(): Promise<SlotContent | null>;
  /** Writes when nothing is there; the new version, or null when a record exists. */
  create(text: string): Promise<string | null>;
  /** Writes when the record is still at `version`; the new version, or null when it changed. */
  replace(text: string, version: string): Promise<string | null>;
  /** Removes the record when it is still at `version`. */
  remove(version: string): Promise<void>;
}

const isCode = (err: unknown, code: string) => (err as { code?: string }).code === code;

/** The lock file `<root>/.svc.lock`: created with O_EXCL, replaced through a temporary file and rename. */
export function fileLockSlot(root: string): LockSlot {
  const path = join(root, LOCK_NAME);
  const read = async (): Promise<SlotContent | null> => {
    try {
      const text = await readFile(path, 'utf8');
      return { text, version: text };
    } catch (err) {
      if (isCode(err, 'ENOENT')) return null;
      throw err;
    }
  };
  return {
    location: path,
    read,
    async create(text) {
      try {
        await writeFile(path, text, { flag: 'wx' });
        return text;
      } catch (err) {
        if (isCode(err, 'EEXIST')) return null;
        throw err;
      }
    },
    async replace(text, version) {
      if ((await read())?.version !== version) return null;
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, text);
      await rename(tmp, path);
      return text;
    },
    async remove(version) {
      if ((await read())?.version === version) await unlink(path).catch(() => undefined);
    },
  };
}

/** The lock object `<prefix>/.svc.lock`, written with If-None-Match / If-Match on its ETag. */
export function remoteLockSlot(remote: RemoteBackend, prefix: string): LockSlot {
  const key = `${prefix}${LOCK_NAME}`;
  const read = async (): Promise<SlotContent | null> => {
    const head = await remote.head(key);
    if (!head) return null;
    // The ETag seen before the body: a record replaced in between fails the conditional write, as it should.
    let body: Uint8Array;
    try {
      body = await remote.get(key);
    } catch (err) {
      // Removed since the HEAD: no record. Any other failure is thrown, never read as an unreadable (stale) record.
      if (err instanceof AppError && err.kind === 'not_found') return null;
      throw err;
    }
    return { text: new TextDecoder().decode(body), version: head.etag };
  };
  const bytes = (text: string) => new TextEncoder().encode(text);
  return {
    location: `${remote.location}/${key}`,
    read,
    create: async (text) => (await remote.putIf(key, bytes(text), { absent: true }))?.etag ?? null,
    replace: async (text, version) => (await remote.putIf(key, bytes(text), { etag: version }))?.etag ?? null,
    async remove(version) {
      if ((await read())?.version === version) await remote.delete(key);
    },
  };
}
