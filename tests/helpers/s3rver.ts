/**
 * An s3rver (a small S3 implementation, npm package) run as a Node child process on a random
 * loopback port, with its files in a temporary folder. (Inside Bun it answers a PUT before the file
 * is fully written, so it runs under Node, as it is meant to.) It checks request signatures against
 * its one built-in key pair, so a wrong key is refused as S3 would. `stop` and `start` play a storage
 * outage: the same port, the same objects.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { spawnUntil } from './spawn.ts';

const BIN = join(import.meta.dir, '..', '..', 'node_modules', 's3rver', 'bin', 's3rver.js');

/** The key pair s3rver accepts. */
export const S3RVER_KEY = { accessKey: 'S3RVER', secretKey: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  port: number;
  /** The s3rver process id while it runs (benchmarks read its CPU time). */
  readonly pid: number;
  /** Stops answering (connections are refused) until `start`. */
  stop(): Promise<void>;
  /** Starts again on the same port with the same objects. */
  start(): Promise<void>;
  /** Stops and removes the data folder. */
  close(): Promise<void>;
  /** Environment for a server that uses this s3rver (`SVC_STORAGE_*`). */
  env(bucket: string, prefix?: string): Record<string, string>;
}

async function spawn(dir: string, port: number, buckets: string[]): Promise<{ proc: Subprocess<'ignore', 'pipe', 'pipe'>; port: number }> {
  const args = ['-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', ...buckets.flatMap((b) => ['--configure-bucket', b])];
  const { proc, match } = await spawnUntil(['node', BIN, ...args], /listening on [^:\s]+:(\d+)/, 's3rver', { timeoutMs: 20_000 });
  return { proc, port: Number(match[1]) };
}

/** Starts an s3rver with the given buckets. */
export async function startS3rver(buckets: string[]): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  let { proc, port } = await spawn(dir, 0, buckets);
  let running = true;
  const endpoint = `http://127.0.0.1:${port}`;
  const s3: TestS3 = {
    endpoint,
    port,
    get pid() {
      return proc.pid;
    },
    async stop() {
      if (!running) return;
      running = false;
      proc.kill();
      await proc.exited;
    },
    async start() {
      if (running) return;
      proc = (await spawn(dir, port, [])).proc;
      running = true;
    },
    async close() {
      await s3.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    env: (bucket, prefix = '') => ({
      SVC_STORAGE_BACKEND: 's3',
      SVC_STORAGE_S3_BUCKET: bucket,
      SVC_STORAGE_S3_ENDPOINT: endpoint,
      SVC_STORAGE_S3_PATH_STYLE: 'true',
      SVC_STORAGE_S3_ACCESS_KEY: S3RVER_KEY.accessKey,
      SVC_STORAGE_S3_SECRET_KEY: S3RVER_KEY.secretKey,
      SVC_STORAGE_S3_PREFIX: prefix,
    }),
  };
  return s3;
}
