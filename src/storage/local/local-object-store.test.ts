import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolPresent } from '../../../tests/helpers/ci.ts';
import { cachedBytes } from '../../lib/page-cache-test-support.ts';
import { assertKey, dataFileKey, LocalObjectStore, parseDataFileKey } from '../index.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('keys', () => {
  test('reject anything that could leave the root', () => {
    for (const bad of ['', '/etc/passwd', '../x', 'a/../b', 'a/./b', 'a//b', 'a\\b', 'a\0b', 'a/'])
      expect(() => assertKey(bad)).toThrow(/cannot use storage key/);
    expect(assertKey('db/m/2024/01/01/00/f.parquet')).toBe('db/m/2024/01/01/00/f.parquet');
  });

  test('data file layout: UTC hour folders, write time and unique nanos in the name', () => {
    const hour = Date.UTC(2024, 1, 29, 23) * 1000;
    const key = dataFileKey('db', 'cpu', hour, 1_700_000_000_123_456_789n);
    expect(key).toBe('db/cpu/2024/02/29/23/cpu_20231114_221320_123456789.parquet');
    expect(parseDataFileKey(key)).toEqual({ database: 'db', measurement: 'cpu', hourMicros: hour });
    expect(dataFileKey('db', 'cpu', hour)).not.toBe(dataFileKey('db', 'cpu', hour));
    expect(() => dataFileKey('db', '../x', hour)).toThrow();
    expect(() => dataFileKey('system', 'x', hour)).toThrow();
  });
});

describe('LocalObjectStore', async () => {
  writeFileSync(join(root, 'stale'), '');
  const store = await new LocalObjectStore(root).open();

  test('put bytes and files atomically, get, stream, stat, list, delete', async () => {
    await store.put('a/b/one.bin', new Uint8Array([1, 2, 3]));
    const scratch = store.scratchPath('two.bin');
    writeFileSync(scratch, 'hello');
    const info = await store.put('a/c/two.bin', { file: scratch });
    expect(info.bytes).toBe(5);
    expect(existsSync(scratch)).toBe(false);
    expect([...(await store.get('a/b/one.bin'))]).toEqual([1, 2, 3]);
    expect(await new Response(await store.stream('a/c/two.bin')).text()).toBe('hello');
    expect((await store.stat('a/b/one.bin'))?.bytes).toBe(3);
    expect(await store.stat('nope')).toBeNull();
    expect((await store.list('')).map((o) => o.key)).toEqual(['a/b/one.bin', 'a/c/two.bin', 'stale']);
    expect((await store.list('a/c/')).map((o) => o.key)).toEqual(['a/c/two.bin']);
    expect(await store.list('missing/')).toEqual([]);
    expect(await store.localPath('a/b/one.bin')).toBe(join(root, 'a/b/one.bin'));
    expect(await store.delete('a/b/one.bin')).toBe(true);
    expect(await store.delete('a/b/one.bin')).toBe(false);
    await expect(store.get('a/b/one.bin')).rejects.toThrow(/does not exist/);
    await expect(store.put('../escape', new Uint8Array(1))).rejects.toThrow(/cannot use storage key/);
    await expect(store.list('../')).rejects.toThrow();
    // Nothing is left behind in the scratch folder.
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
  });
});

describe('page cache', () => {
  const body = new Uint8Array(1 << 20).map((_, i) => i * 31);

  test.skipIf(process.platform !== 'linux')('a put with dropPageCache leaves the file on disk, whole, and out of the page cache', async () => {
    const dropping = await new LocalObjectStore(join(root, 'drop'), { dropPageCache: true }).open();
    const keeping = await new LocalObjectStore(join(root, 'keep')).open();
    await dropping.put('db/m/a.parquet', body);
    await keeping.put('db/m/a.parquet', body);
    const dropped = await dropping.localPath('db/m/a.parquet');
    const kept = await keeping.localPath('db/m/a.parquet');
    const before = [cachedBytes(dropped), cachedBytes(kept)];
    expect(await dropping.get('db/m/a.parquet')).toEqual(body);
    // Without fincore (util-linux-extra) the page cache cannot be read: passed over locally, a failure under CI.
    if (toolPresent(before[0] !== null && before[1] !== null, 'fincore (util-linux-extra)')) {
      expect(before[0]).toBe(0);
      expect(before[1]).toBeGreaterThan(0);
    }
  });
});
