import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedFile, extractMissing, nativeCacheRoot } from './native-cache.ts';

describe('nativeCacheRoot', () => {
  test('SVC_NATIVE_CACHE_DIR wins, resolved to an absolute path', () => {
    expect(nativeCacheRoot({ SVC_NATIVE_CACHE_DIR: '/opt/cache', XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/opt/cache');
    expect(nativeCacheRoot({ SVC_NATIVE_CACHE_DIR: 'rel' })).toBe(join(process.cwd(), 'rel'));
  });
  test('then an absolute XDG_CACHE_HOME, then ~/.cache', () => {
    expect(nativeCacheRoot({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/svc');
    expect(nativeCacheRoot({ XDG_CACHE_HOME: 'relative', HOME: '/h' })).toBe('/h/.cache/svc');
  });
  test('a user without a home gets a per-user folder in tmp', () => {
    expect(nativeCacheRoot({ HOME: '/' })).toStartWith(join(tmpdir(), 'svc-cache-'));
  });
});

describe('extractMissing', () => {
  let dir: string;
  let file: EmbeddedFile;
  const content = Buffer.from('not really a shared library, but bytes all the same\n'.repeat(100));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-native-cache-'));
    const embeddedPath = join(dir, 'libfake.so.zst');
    writeFileSync(embeddedPath, Bun.zstdCompressSync(content));
    file = { name: 'libfake.so', embeddedPath, size: content.length };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('writes a missing file once, then reuses it', () => {
    const out = join(dir, 'out');
    expect(extractMissing(out, [file])).toBe(1);
    expect(readFileSync(join(out, 'libfake.so'))).toEqual(content);
    const mtime = statSync(join(out, 'libfake.so')).mtimeMs;
    expect(extractMissing(out, [file])).toBe(0);
    expect(statSync(join(out, 'libfake.so')).mtimeMs).toBe(mtime);
    expect(readdirSync(out)).toEqual(['libfake.so']); // no temp files left behind
  });

  test('replaces a truncated copy', () => {
    const out = join(dir, 'out');
    extractMissing(out, [file]);
    writeFileSync(join(out, 'libfake.so'), 'trunc');
    expect(extractMissing(out, [file])).toBe(1);
    expect(readFileSync(join(out, 'libfake.so'))).toEqual(content);
  });

  test('refuses embedded bytes of the wrong size', () => {
    expect(() => extractMissing(join(dir, 'out'), [{ ...file, size: 1 }])).toThrow(/expected 1/);
  });
});
