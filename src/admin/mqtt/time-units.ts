/** Point timestamps -> epoch microseconds, with the unit told by magnitude as the MessagePack route does. */

/**
 * Epoch number in an unknown unit -> microseconds: s < 1e10 <= ms < 1e13 <= µs < 1e16 <= ns.
 * Fractions are kept down to the microsecond (float seconds like 1706745600.25 are common from devices).
 */
export function epochToMicros(v: number): number {
  const a = Math.abs(v);
  if (a < 1e10) return Math.round(v * 1e6);
  if (a < 1e13) return Math.round(v * 1e3);
  if (a < 1e16) return Math.round(v);
  return Math.round(v / 1e3);
}

/** A point's time value (number, BigInt, numeric string or RFC 3339 string) -> epoch µs; throws naming the value. */
export function timeToMicros(v: unknown, nowMicros: number): number {
  if (v === null || v === undefined) return nowMicros;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`time must be a finite number, got ${v}`);
    return epochToMicros(v);
  }
  if (typeof v === 'bigint') {
    const a = v < 0n ? -v : v;
    // Exact integer division for nanoseconds, which exceed 2^53 and would lose digits as a double.
    return a >= 10_000_000_000_000_000n ? Number(v / 1000n) : epochToMicros(Number(v));
  }
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^-?\d+(\.\d+)?$/.test(s)) return /^-?\d{17,}$/.test(s) ? Number(BigInt(s) / 1000n) : epochToMicros(Number(s));
    const ms = Date.parse(s);
    if (Number.isNaN(ms)) throw new Error(`time '${v.slice(0, 64)}' is neither an epoch number nor an RFC 3339 timestamp`);
    // Date.parse stops at milliseconds; keep the microsecond digits of an RFC 3339 fraction.
    const frac = /\.\d{3}(\d{1,3})/.exec(s);
    return ms * 1000 + (frac ? Number(frac[1]!.padEnd(3, '0')) : 0);
  }
  throw new Error(`time must be a number or a timestamp string, got ${typeof v}`);
}
