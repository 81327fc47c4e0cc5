/** Messages between the parse pool (index.ts) and a parse worker (parse-worker.ts). */
import type { WireBatches } from '../batch-wire.ts';
import type { LineError, Precision } from '../lineprotocol/index.ts';

/** A body to parse (a buffer transferred to the worker) and how. */
export type ParseRequest =
  | { id: number; format: 'lp'; body: Uint8Array; precision: Precision; now: number }
  | { id: number; format: 'msgpack'; body: Uint8Array; now: number };

/** An AppError as data: the event loop throws the same error again. */
export interface ErrorData {
  kind: string;
  message: string;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The first message (`ready`), then one answer per request: the parse result, or what it threw. */
export type ParseReply =
  | { ready: true }
  | { id: number; batches: WireBatches; errors: LineError[]; lines: number; rejected: number }
  | { id: number; error: string; app?: ErrorData };
