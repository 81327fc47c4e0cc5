/** Messages between the parse pool (parse-pool.ts) and a parse worker (parse-worker.ts). */
import type { WireBatch } from '../batch-wire.ts';
import type { LineError, Precision } from '../lineprotocol/index.ts';

/** A line-protocol body to parse; the body is a copy transferred to the worker. */
export interface ParseRequest {
  id: number;
  body: Uint8Array;
  precision: Precision;
  now: number;
}

/** The first message (`ready`), then one answer per request: the parse result, or why it threw. */
export type ParseReply =
  | { ready: true }
  | { id: number; batches: WireBatch[]; errors: LineError[]; lines: number; rejected: number }
  | { id: number; error: string };
