/**
 * Decompression bombs (issue 21, point 4): a small gzip or zstd body that inflates to gigabytes is
 * refused at server.max_payload_size while it inflates, and all bodies in flight together stay
 * within server.max_inflight_body_size (503 with Retry-After beyond it). Peak memory is read from
 * the server process's /proc status (VmHWM), not guessed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { startServer, type TestServer } from './helpers/server.ts';

const MB = 1024 * 1024;
const ZEROS = new Uint8Array(MB);

/** `copies` concatenated gzip members (or zstd frames) of 1 MB of zeros: a valid body of `copies` MB. */
function bomb(kind: 'gzip' | 'zstd', copies: number): Uint8Array {
  const one = kind === 'gzip' ? gzipSync(ZEROS) : Bun.zstdCompressSync(ZEROS);
  const out = new Uint8Array(one.length * copies);
  for (let i = 0; i < copies; i++) out.set(one, i * one.length);
  return out;
}

/** A figure of the process's /proc/<pid>/status in bytes (VmRSS now, VmHWM the peak). */
function procMemory(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

describe('decompression bombs', () => {
  // s: a small cap under the budget (bombs end in 413); big: the default 1 GB cap over the budget.
  let s: TestServer;
  let big: TestServer;
  const gzip2GB = bomb('gzip', 2048);
  const zstd2GB = bomb('zstd', 2048);

  beforeAll(async () => {
    s = await startServer({ env: { SVC_SERVER_MAX_PAYLOAD_SIZE: '64MB', SVC_SERVER_MAX_INFLIGHT_BODY_SIZE: '400MB' } });
    big = await startServer({ env: { SVC_SERVER_MAX_INFLIGHT_BODY_SIZE: '256MB' } });
  }, 60_000);
  afterAll(async () => {
    await s?.cleanup();
    await big?.cleanup();
  }, 30_000);

  test('the bodies are small and really inflate to 2 GB (a guard against a test that cannot fail)', () => {
    expect(gzip2GB.length).toBeLessThan(5 * MB);
    expect(zstd2GB.length).toBeLessThan(5 * MB);
  });

  test('one bomb is refused with 413 at the cap, on every write route, gzip and zstd', async () => {
    for (const [path, body] of [
      ['/api/v1/write/line-protocol', gzip2GB],
      ['/write?db=bombs', zstd2GB],
      ['/api/v1/write/msgpack', zstd2GB],
      ['/api/v1/write/tle', gzip2GB],
    ] as const) {
      const res = await s.fetch(path, { method: 'POST', body });
      expect({ path, status: res.status }).toEqual({ path, status: 413 });
      expect(((await res.json()) as { error: string }).error).toContain('max_payload_size');
    }
  }, 30_000);

  test('20 concurrent bombs keep the peak RSS under 1 GB and the server answering', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await big.fetch('/api/v1/write/line-protocol', { method: 'POST', body: i % 2 ? gzip2GB : zstd2GB });
        if (res.status === 503) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    // Each bomb may inflate to 1 GB (the cap), but together they stop at the 256 MB budget.
    expect(statuses.every((st) => st === 503)).toBe(true);
    const peak = procMemory(big.proc.pid, 'VmHWM');
    console.log(`peak RSS of the server after 20 concurrent 2 GB bombs: ${(peak / MB).toFixed(0)} MB`);
    expect(peak).toBeLessThan(1024 * MB);
    // The budget was given back: a good write (and a compressed one) is answered as before.
    expect((await big.fetch('/write?db=bombs', { method: 'POST', body: 'm v=1 1\n' })).status).toBe(204);
    expect((await big.fetch('/write?db=bombs', { method: 'POST', body: gzipSync('m v=2 2\n'.repeat(100_000)) })).status).toBe(204);
  }, 60_000);
});
