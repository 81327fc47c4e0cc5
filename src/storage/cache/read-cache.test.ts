import { afterAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadCache } from './read-cache.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dir = () => join(root, String(n++));

/** A download that writes `size` bytes of `fill` and reports `etag`. */
const body = (size: number, fill: string, etag = `"${fill}"`) => async (file: string) => {
  writeFileSync(file, fill.repeat(size));
  return { etag };
};

test('fills on a miss, hits after, names the copy by ETag, keeps the key layout', async () => {
  const cache = await new ReadCache({ dir: dir(), maxBytes: 1000, graceMs: 0 }).open();
  const file = await cache.fill('db/m/f.parquet', body(10, 'a', '"abc-1"'));
  expect(file).toBe(join(cache.root, 'db/m/abc-1~f.parquet'));
  expect(readFileSync(file, 'utf8')).toBe('a'.repeat(10));
  expect(cache.holds('db/m/f.parquet', '"abc-1"')).toBe(true);
  expect(cache.holds('db/m/f.parquet', '"abc-2"')).toBe(false);
  expect(cache.hit('db/m/f.parquet', true)).toBe(file);
  expect(cache.hit('db/m/none', true)).toBeNull();
  expect(cache.stats()).toMatchObject({ files: 1, bytes: 10, hits: 1, misses: 1 });
});

test('concurrent misses of one key download once', async () => {
  const cache = await new ReadCache({ dir: dir(), maxBytes: 1000 }).open();
  let downloads = 0;
  const slow = async (file: string) => {
    downloads++;
    await Bun.sleep(20);
    writeFileSync(file, 'x');
    return { etag: 'e' };
  };
  const paths = await Promise.all([cache.fill('k/a', slow), cache.fill('k/a', slow), cache.fill('k/a', slow)]);
  expect(downloads).toBe(1);
  expect(new Set(paths).size).toBe(1);
});

test('evicts least recently used copies down to the bound, never a busy one', async () => {
  const busy = new Set<string>();
  const cache = await new ReadCache({ dir: dir(), maxBytes: 30, graceMs: 0, inUse: (k) => busy.has(k) }).open();
  const a = await cache.fill('k/a', body(10, 'a'));
  const b = await cache.fill('k/b', body(10, 'b'));
  await cache.fill('k/c', body(10, 'c'));
  cache.hit('k/a', false); // a is now more recent than b
  busy.add('k/c');
  await cache.fill('k/d', body(10, 'd'));
  expect(existsSync(b)).toBe(false);
  expect(existsSync(a)).toBe(true);
  expect(cache.stats()).toMatchObject({ files: 3, bytes: 30, evictions: 1 });
  // Everything else busy: the cache goes over its bound rather than pull a file from under a query.
  busy.add('k/a').add('k/d');
  await cache.fill('k/e', body(10, 'e'));
  expect(cache.stats().bytes).toBe(40);
  busy.clear();
  await cache.fill('k/f', body(5, 'f'));
  expect(cache.stats().bytes).toBeLessThanOrEqual(30);
});

test('files handed out within the grace period are not evicted', async () => {
  const cache = await new ReadCache({ dir: dir(), maxBytes: 10, graceMs: 60_000 }).open();
  const a = await cache.fill('k/a', body(10, 'a'));
  await cache.fill('k/b', body(10, 'b'));
  expect(existsSync(a)).toBe(true);
  expect(cache.stats().bytes).toBe(20);
});

test('invalidate forgets a copy; a download that raced an invalidation must be checked again', async () => {
  const cache = await new ReadCache({ dir: dir(), maxBytes: 1000, graceMs: 0 }).open();
  const old = await cache.fill('k/a', body(3, 'a', 'v1'));
  cache.invalidate('k/a');
  expect(cache.checkedAt('k/a')).toBeNull();
  await Bun.sleep(5);
  expect(existsSync(old)).toBe(false);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const filling = cache.fill('k/a', async (file) => {
    await gate;
    writeFileSync(file, 'old');
    return { etag: 'v2' };
  });
  cache.invalidate('k/a');
  release();
  await filling;
  expect(cache.checkedAt('k/a')).toBe(0);
});

test('adopt takes over an uploaded file; a reopened cache finds its copies (unconfirmed)', async () => {
  const d = dir();
  const cache = await new ReadCache({ dir: d, maxBytes: 1000 }).open();
  const scratch = cache.scratchPath('up.parquet');
  writeFileSync(scratch, 'uploaded');
  await cache.adopt('db/m/up.parquet', scratch, '"e1"');
  expect(existsSync(scratch)).toBe(false);
  expect(readFileSync(cache.hit('db/m/up.parquet', false)!, 'utf8')).toBe('uploaded');
  writeFileSync(cache.scratchPath('partial'), 'left by a crash');
  const again = await new ReadCache({ dir: d, maxBytes: 1000 }).open();
  expect(again.holds('db/m/up.parquet', 'e1')).toBe(true);
  expect(again.checkedAt('db/m/up.parquet')).toBe(0);
  expect(readdirSync(join(d, 'tmp'))).toEqual([]);
});
