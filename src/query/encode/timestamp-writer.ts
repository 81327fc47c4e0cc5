/**
 * RFC 3339 UTC timestamps written as bytes: `2024-01-02T03:04:05.123456Z`, fraction trimmed of
 * trailing zeros (Go's RFC3339Nano form). The `YYYY-MM-DDTHH:MM:SS` prefix is cached per second,
 * since consecutive rows of a time series mostly share it.
 */
import type { ByteSink } from './byte-sink.ts';
import type { TimeUnit } from './column-kind.ts';
import { int64At } from './values.ts';

const PER_SEC: Record<TimeUnit, number> = { s: 1, ms: 1e3, us: 1e6, ns: 1e9 };
const DIGITS: Record<TimeUnit, number> = { s: 0, ms: 3, us: 6, ns: 9 };
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

  /** Writes 64-bit value `i` of `w` (32-bit word pairs) as `"…Z"`; ns values go through BigInt to stay exact. */
  write(sink: ByteSink, w: Int32Array, i: number): void {
    if (this.unit === 'ns') {
      const big = BigInt.asIntN(64, (BigInt(w[2 * i + 1]! >>> 0) << 32n) | BigInt(w[2 * i]! >>> 0));
      let sec = big / 1_000_000_000n;
      if (big % 1_000_000_000n < 0n) sec -= 1n;
      return this.parts(sink, Number(sec), Number(big - sec * 1_000_000_000n));
    }
    const v = int64At(w, i);
    const sec = Math.floor(v / this.perSec);
    this.parts(sink, sec, v - sec * this.perSec);
  }

  private parts(sink: ByteSink, sec: number, frac: number): void {
    if (sec !== this.lastSec) {
      this.lastSec = sec;
      const d = new Date(sec * 1000);
      this.prefix = ascii.encode(Number.isNaN(d.getTime()) ? String(sec) : d.toISOString().slice(0, -5));
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
