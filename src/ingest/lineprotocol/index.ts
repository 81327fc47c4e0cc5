/** Line protocol (InfluxDB text format) -> one ColumnBatch per measurement, with per-line errors. */
import { invalid } from '../../lib/errors.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { LineParser, type LineError, MAX_LINE_ERRORS } from './line-parser.ts';
import { type Precision, PRECISIONS } from './numbers.ts';

export type { LineError } from './line-parser.ts';
export type { Precision } from './numbers.ts';
export { MAX_LINE_ERRORS, PRECISIONS };
export { encodeLineProtocol } from './line-encoder.ts';

/** How timestamps are read, and the time (epoch µs) given to lines that carry none. */
export interface LineProtocolOptions {
  precision: Precision;
  now: number;
}

/** Parse outcome: accepted rows by measurement, rejected lines (at most MAX_LINE_ERRORS kept), counts. */
export interface LineProtocolResult {
  batches: ColumnBatch[];
  errors: LineError[];
  /** Non-blank, non-comment lines in the body, accepted or rejected. */
  lines: number;
  /** Rejected lines, including those beyond the ones kept in `errors`. */
  rejected: number;
}

const NL = 10;
const encoder = new TextEncoder();

/** Most rows reserved up front from an estimate (a longer body grows its columns as before). */
const MAX_ESTIMATE = 1 << 16;
const SAMPLE_BYTES = 4096;

/**
 * About how many lines `buf` holds, from the newlines of its first few KB, so the columns of its
 * first measurement are sized once instead of doubling four times and being copied into shared
 * memory at the end (that growing was ~15% of the parse on 5,000-line bodies).
 */
function estimateLines(buf: Buffer): number {
  const sample = Math.min(buf.length, SAMPLE_BYTES);
  let lines = 0;
  for (let at = buf.indexOf(NL); at >= 0 && at < sample; at = buf.indexOf(NL, at + 1)) lines++;
  if (sample === buf.length) return lines + 1;
  const estimate = Math.ceil(((lines + 1) * buf.length) / sample * 1.05);
  return Math.min(MAX_ESTIMATE, estimate);
}

/** Whether `value` names a line-protocol precision. */
export function isPrecision(value: string): value is Precision {
  return (PRECISIONS as readonly string[]).includes(value);
}

/**
 * Parses a line-protocol body. Bad lines are reported with their 1-based number and reason and
 * skipped; good lines are kept (partial-write semantics). Only a bad option throws (AppError invalid).
 */
export function parseLineProtocol(input: string | Uint8Array, opts: LineProtocolOptions): LineProtocolResult {
  const precision = PRECISIONS.indexOf(opts.precision);
  if (precision < 0) throw invalid(`cannot parse line protocol: unknown precision '${String(opts.precision)}' (use ns, us, ms or s)`);
  if (!Number.isFinite(opts.now)) throw invalid('cannot parse line protocol: now must be a finite number of microseconds');
  const bytes = typeof input === 'string' ? encoder.encode(input) : input;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parser = new LineParser(precision, opts.now, estimateLines(buf));
  // The scanner needs '\n' after every line: the body is parsed in place up to its last newline and
  // only the unterminated tail, if any, is copied with one appended.
  const lastNewline = buf.lastIndexOf(NL);
  const line = parser.parse(buf.subarray(0, lastNewline + 1), 1);
  if (lastNewline + 1 < buf.length) {
    const tail = Buffer.allocUnsafe(buf.length - lastNewline);
    buf.copy(tail, 0, lastNewline + 1);
    tail[tail.length - 1] = NL;
    parser.parse(tail, line);
  }
  return { batches: parser.finish(), errors: parser.errors, lines: parser.lines, rejected: parser.rejected };
}
