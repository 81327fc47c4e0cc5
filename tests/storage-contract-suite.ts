/**
 * The ObjectStore contract: one suite, run against every backend (local disk, s3rver, Azurite) by
 * tests/storage-contract.test.ts, as Hono runs one router suite against every router. A backend that
 * passes behaves like the local store in everything the rest of svc relies on.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { AppError } from '../src/lib/errors.ts';
import type { ObjectStore } from '../src/storage/index.ts';

/** Opens a store of the backend under test; stores with the same `prefix` see the same objects. */
export type StoreFactory = (prefix: string) => Promise<ObjectStore>;

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Large enough to need several parts or blocks at the part sizes the factories set. */
const LARGE = 12 * 1024 * 1024 + 123;

/**
 * A missing object has no local copy: remote stores refuse with not_found; the local store, whose
 * `localPath` is a plain path computation, gives a path where no file is.
 */
async function noLocalCopy(store: ObjectStore, key: string): Promise<void> {
  const out = await store.localPath(key).catch((e: unknown) => e);
  if (typeof out === 'string') expect(existsSync(out)).toBe(false);
  else expect((out as AppError).kind).toBe('not_found');
}

async function notFoundOf(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).kind).toBe('not_found');
  return err as AppError;
}

/** Registers the contract tests for one backend. `run` is unique per call (isolates repeated runs). */
export function objectStoreContract(name: string, open: StoreFactory): void {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const p = (what: string) => `${run}-${what}`;

  describe(`ObjectStore contract: ${name}`, () => {
    test('put bytes and files; get, stream, stat, list, delete', async () => {
      const store = await open(p('basic'));
      const one = await store.put('a/b/one.bin', new Uint8Array([1, 2, 3]));
      expect(one).toMatchObject({ key: 'a/b/one.bin', bytes: 3 });
      const scratch = store.scratchPath('two.bin');
      writeFileSync(scratch, 'hello');
      expect(await store.put('a/c/two.bin', { file: scratch })).toMatchObject({ key: 'a/c/two.bin', bytes: 5 });
      // The store took the file over: nothing is left at the scratch path.
      expect(existsSync(scratch)).toBe(false);
      // A file its writer already fsynced (a flush worker's) is taken over the same way.
      const synced = store.scratchPath('four.bin');
      writeFileSync(synced, 'synced');
      expect(await store.put('a/d/four.bin', { file: synced, synced: true })).toMatchObject({ key: 'a/d/four.bin', bytes: 6 });
      expect(existsSync(synced)).toBe(false);
      expect(await new Response(await store.stream('a/d/four.bin')).text()).toBe('synced');
      await store.delete('a/d/four.bin');
      await store.put('b/three.bin', bytes('xyz'));

      expect([...(await store.get('a/b/one.bin'))]).toEqual([1, 2, 3]);
      expect(await new Response(await store.stream('a/c/two.bin')).text()).toBe('hello');
      const st = await store.stat('a/b/one.bin');
      expect(st?.bytes).toBe(3);
      expect(Math.abs(st!.modifiedMs - Date.now())).toBeLessThan(120_000);
      expect(await store.stat('a/b/none.bin')).toBeNull();

      expect((await store.list('')).map((o) => o.key)).toEqual(['a/b/one.bin', 'a/c/two.bin', 'b/three.bin']);
      expect((await store.list('a/')).map((o) => [o.key, o.bytes])).toEqual([
        ['a/b/one.bin', 3],
        ['a/c/two.bin', 5],
      ]);
      expect(await store.list('missing/')).toEqual([]);

      expect(await store.delete('a/b/one.bin')).toBe(true);
      expect(await store.delete('a/b/one.bin')).toBe(false);
      expect((await store.list('a/')).map((o) => o.key)).toEqual(['a/c/two.bin']);
    });

    test('missing objects: not_found errors, null stat, false delete', async () => {
      const store = await open(p('missing'));
      const err = await notFoundOf(store.get('x/none.parquet'));
      expect(err.message).toContain("'x/none.parquet'");
      await notFoundOf(store.stream('x/none.parquet'));
      await noLocalCopy(store, 'x/none.parquet');
      expect(await store.stat('x/none.parquet')).toBeNull();
      expect(await store.delete('x/none.parquet')).toBe(false);
    });

    test('deleteMany: present and missing keys in one call; other keys stay', async () => {
      const store = await open(p('many'));
      for (const k of ['w/1.seg', 'w/2.seg', 'w/3.seg', 'keep/4.seg']) await store.put(k, bytes(k));
      await store.deleteMany(['w/1.seg', 'w/none.seg', 'w/3.seg', 'w/2.seg', 'w/other/none.seg']);
      expect((await store.list('')).map((o) => o.key)).toEqual(['keep/4.seg']);
      await store.deleteMany([]);
      await expect(store.deleteMany(['../escape'])).rejects.toThrow(/cannot use storage key/);
      expect(await store.stat('keep/4.seg')).not.toBeNull();
    });

    test('keys and prefixes are checked before anything is sent', async () => {
      const store = await open(p('keys'));
      for (const bad of ['../escape', '/abs', 'a//b', 'a/./b', ''])
        await expect(store.put(bad, new Uint8Array(1))).rejects.toThrow(/cannot use storage key/);
      await expect(store.get('../x')).rejects.toThrow(/cannot use storage key/);
      await expect(store.list('no-slash')).rejects.toThrow(/must end with/);
      await expect(store.list('../')).rejects.toThrow();
    });

    test('localPath: a readable local copy that follows rewrites and deletes', async () => {
      const store = await open(p('local'));
      await store.put('m/f.parquet', bytes('version-1'));
      const first = await store.localPath('m/f.parquet');
      expect(readFileSync(first, 'utf8')).toBe('version-1');
      expect(readFileSync(await store.localPath('m/f.parquet'), 'utf8')).toBe('version-1');
      await store.put('m/f.parquet', bytes('version-2, longer'));
      expect(readFileSync(await store.localPath('m/f.parquet'), 'utf8')).toBe('version-2, longer');
      // Written through a file (the flush path): readable at once.
      const scratch = store.scratchPath('g.parquet');
      writeFileSync(scratch, 'flushed');
      await store.put('m/g.parquet', { file: scratch });
      expect(readFileSync(await store.localPath('m/g.parquet'), 'utf8')).toBe('flushed');
      await store.delete('m/f.parquet');
      await noLocalCopy(store, 'm/f.parquet');
    });

    test('a rewrite by another server sharing the prefix is never served stale', async () => {
      const a = await open(p('shared'));
      const b = await open(p('shared'));
      await a.put('m/f.parquet', bytes('from-a'));
      expect(readFileSync(await b.localPath('m/f.parquet'), 'utf8')).toBe('from-a');
      await a.put('m/f.parquet', bytes('from-a, rewritten'));
      expect(readFileSync(await b.localPath('m/f.parquet'), 'utf8')).toBe('from-a, rewritten');
      await a.delete('m/f.parquet');
      await noLocalCopy(b, 'm/f.parquet');
    });

    test('prefix isolation: stores with different prefixes never see each other', async () => {
      const x = await open(p('iso-x'));
      const y = await open(p('iso-x-y'));
      const x2 = await open(p('iso-x'));
      await x.put('db/m/f.bin', bytes('x'));
      await y.put('db/m/f.bin', bytes('y'));
      await y.put('db/m/g.bin', bytes('y'));
      expect((await x.list('')).map((o) => o.key)).toEqual(['db/m/f.bin']);
      expect((await y.list('db/')).map((o) => o.key)).toEqual(['db/m/f.bin', 'db/m/g.bin']);
      expect(text(await x.get('db/m/f.bin'))).toBe('x');
      expect(text(await y.get('db/m/f.bin'))).toBe('y');
      await notFoundOf(x.get('db/m/g.bin'));
      // The same prefix is the same data: a second server sees the first one's objects.
      expect(text(await x2.get('db/m/f.bin'))).toBe('x');
      expect(await y.delete('db/m/f.bin')).toBe(true);
      expect(text(await x.get('db/m/f.bin'))).toBe('x');
    });

    test('large objects (multipart / block upload) round-trip through bytes, files and streams', async () => {
      const store = await open(p('large'));
      const big = new Uint8Array(LARGE);
      for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff;
      big[big.length - 1] = 7;
      await store.put('big/bytes.bin', big);
      const scratch = store.scratchPath('big.bin');
      writeFileSync(scratch, big);
      expect((await store.put('big/file.bin', { file: scratch })).bytes).toBe(LARGE);
      for (const key of ['big/bytes.bin', 'big/file.bin']) {
        expect((await store.stat(key))?.bytes).toBe(LARGE);
        expect(Buffer.from(await store.get(key)).equals(Buffer.from(big))).toBe(true);
        const streamed = new Uint8Array(await new Response(await store.stream(key)).arrayBuffer());
        expect(Buffer.from(streamed).equals(Buffer.from(big))).toBe(true);
        expect(Buffer.from(readFileSync(await store.localPath(key))).equals(Buffer.from(big))).toBe(true);
      }
    });

    test('concurrent writers: distinct keys all land; one key ends as one whole version', async () => {
      const store = await open(p('concurrent'));
      const keys = Array.from({ length: 24 }, (_, i) => `c/${String(i).padStart(2, '0')}.bin`);
      await Promise.all(keys.map((k, i) => store.put(k, bytes(`value-${i}`.repeat(100)))));
      expect((await store.list('c/')).map((o) => o.key)).toEqual(keys);
      const versions = Array.from({ length: 8 }, (_, i) => bytes(String(i).repeat(1000 + i)));
      await Promise.all(versions.map((v) => store.put('same/key.bin', v)));
      const final = text(await store.get('same/key.bin'));
      expect(versions.map(text)).toContain(final);
      expect(readFileSync(await store.localPath('same/key.bin'), 'utf8')).toBe(final);
      await Promise.all(keys.map((k) => store.delete(k)));
      expect(await store.list('c/')).toEqual([]);
    });
  });
}
