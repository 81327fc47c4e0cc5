/**
 * RFC 3339 UTC timestamps written as bytes: `2024-01-02T03:04:05.123456Z`, fraction trimmed of
 * trailing zeros (Go's RFC3339Nano form). The `YYYY-MM-DDTHH:MM:SS` prefix is cached per second,
 * since consecutive rows of a time series mostly share it. Years outside 0000-9999 take ISO 8601's
 * expanded form (see dateText); DuckDB's infinities are written as `infinity` and `-infinity`.
 */
import type { ByteSink } from './byte-sink.ts';
import type { TimeUnit } from './column-kind.ts';
import { civilDate, int64At, twoDigits } from './values.ts';

const PER_SEC: Record<TimeUnit, number> = { s: 1, ms: 1e3, us: 1e6, ns: 1e9 };
const DIGITS: Record<TimeUnit, number> = { s: 0, ms: 3, us: 6, ns: 9 };
const TWO_53 = 9007199254740992;
const INFINITY = 2n ** 63n - 1n;
const ascii = new TextEncoder();

/** Writes epoch values of one unit as quoted RFC 3339 strings. */
export class TimestampWriter {
  private lastSec = Number.NaN;
  private prefix = new Uint8Array(0);
  private readonly perSec: number;
  private readonly digits: number;

  constructor(private readonly unit: TimeUnit) {
    this.perSec = PER_SEC[unit];
    this.digits = DIGITS[unit];
  }

  /** Writes 64-bit value `i` of `w` (32-bit word pairs) as `"…Z"`; values beyond 2^53 go through BigInt to stay exact. */
  write(sink: ByteSink, w: Int32Array, i: number): void {
    const v = int64At(w, i);
    if (v < TWO_53 && v > -TWO_53) {
      const sec = Math.floor(v / this.perSec);
      return this.parts(sink, sec, v - sec * this.perSec);
    }
    const big = BigInt.asIntN(64, (BigInt(w[2 * i + 1]! >>> 0) << 32n) | BigInt(w[2 * i]! >>> 0));
    if (big === INFINITY || big === -INFINITY) return sink.ascii(big > 0n ? '"infinity"' : '"-infinity"');
    const per = BigInt(this.perSec);
    let sec = big / per;
    if (big % per < 0n) sec -= 1n;
    this.parts(sink, Number(sec), Number(big - sec * per));
  }

  private parts(sink: ByteSink, sec: number, frac: number): void {
    if (sec !== this.lastSec) {
      this.lastSec = sec;
      const days = Math.floor(sec / 86400);
      const rem = sec - days * 86400;
      this.prefix = ascii.encode(`${civilDate(days)}T${twoDigits(Math.floor(rem / 3600))}:${twoDigits(Math.floor(rem / 60) % 60)}:${twoDigits(rem % 60)}`);
    }
    sink.byte(34);
    sink.bytes(this.prefix);
    if (frac !== 0) {
      sink.byte(46);
      sink.padded(frac, this.digits);
      while (sink.buf[sink.pos - 1] === 48) sink.pos--;
    }
    sink.byte(90);
    sink.byte(34);
  }
}
