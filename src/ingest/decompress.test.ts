import { describe, expect, test } from 'bun:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { bombWithCorruptTail } from './bomb-test-support.ts';
import { decompress, detectCompression } from './decompress.ts';
import { zstdFramesProblem } from './zstd-frames.ts';
import { errorOf } from './test-support.ts';

const text = new TextEncoder().encode('cpu,host=a value=1 1700000000000000000\n'.repeat(500));


describe('detectCompression', () => {
  test('recognises gzip and zstd by magic bytes only', () => {
    expect(detectCompression(gzipSync(text))).toBe('gzip');
    expect(detectCompression(zstdCompressSync(text))).toBe('zstd');
    expect(detectCompression(text)).toBe('none');
    expect(detectCompression(new Uint8Array([0x1f]))).toBe('none');
    expect(detectCompression(new Uint8Array(0))).toBe('none');
  });
});

describe('decompress', () => {
  test('passes plain bodies through untouched', () => {
    expect(decompress(text, 10)).toBe(text);
  });

  test('inflates gzip, including several concatenated members', () => {
    expect(decompress(gzipSync(text), 1 << 20)).toEqual(new Uint8Array(text));
    const two = Buffer.concat([gzipSync(text), gzipSync(text)]);
    expect(decompress(two, 1 << 20).length).toBe(text.length * 2);
  });

  test('inflates zstd, including several frames and skippable frames', () => {
    expect(decompress(zstdCompressSync(text), 1 << 20)).toEqual(new Uint8Array(text));
    const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9]);
    const body = Buffer.concat([zstdCompressSync(text), skippable, zstdCompressSync(text)]);
    expect(decompress(body, 1 << 20).length).toBe(text.length * 2);
  });

  test('allows output of exactly maxBytes', () => {
    expect(decompress(gzipSync(text), text.length).length).toBe(text.length);
    expect(decompress(zstdCompressSync(text), text.length).length).toBe(text.length);
  });

  // The bombs end in corruption past the first 64 MiB: only an inflater that went on past the cap
  // reaches it ('invalid'). How fast the cap stops them is bench/lineprotocol-parse.bench.ts's line.
  test('stops a gzip bomb at the cap without inflating it all', () => {
    const err = errorOf(() => decompress(bombWithCorruptTail('gzip'), 1 << 20));
    expect(err.kind).toBe('too_large');
    expect(err.message).toContain('more than 1048576 bytes');
    expect(errorOf(() => decompress(bombWithCorruptTail('gzip'), 1 << 30)).kind).toBe('invalid');
  });

  test('stops a zstd bomb at the cap without inflating it all', () => {
    const err = errorOf(() => decompress(bombWithCorruptTail('zstd'), 1 << 20));
    expect(err.kind).toBe('too_large');
    expect(errorOf(() => decompress(bombWithCorruptTail('zstd'), 1 << 30)).kind).toBe('invalid');
  });

  test('rejects corrupt and truncated gzip as invalid', () => {
    const gz = Buffer.from(gzipSync(text));
    expect(errorOf(() => decompress(gz.subarray(0, gz.length - 8), 1 << 20)).kind).toBe('invalid');
    const corrupt = Buffer.from(gz);
    corrupt[12] ^= 0xff;
    corrupt[13] ^= 0xff;
    const err = errorOf(() => decompress(corrupt, 1 << 20));
    expect(err.kind).toBe('invalid');
    expect(err.message).toStartWith('cannot decompress gzip request body: ');
    expect(errorOf(() => decompress(new Uint8Array([0x1f, 0x8b]), 100)).kind).toBe('invalid');
  });

  test('rejects truncated zstd (which the native inflater would accept silently)', () => {
    const noise = new Uint8Array(200_000);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 27;
    const zs = zstdCompressSync(noise);
    for (const cut of [4, 5, 12, 100, zs.length >> 1, zs.length - 1]) {
      const err = errorOf(() => decompress(zs.subarray(0, cut), 1 << 20));
      expect(err.kind).toBe('invalid');
      expect(err.message).toContain('cannot decompress zstd request body');
    }
  });

  test('rejects zstd followed by garbage', () => {
    const body = Buffer.concat([zstdCompressSync(text), Buffer.from('garbage!')]);
    expect(errorOf(() => decompress(body, 1 << 20)).message).toContain('unexpected bytes after the last frame');
  });
});

describe('zstdFramesProblem', () => {
  test('accepts complete streams', () => {
    expect(zstdFramesProblem(zstdCompressSync(text))).toBeNull();
    expect(zstdFramesProblem(zstdCompressSync(new Uint8Array(0)))).toBeNull();
  });
});
