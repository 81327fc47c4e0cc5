import { invalid } from '../lib/errors.ts';

/** A time query parameter, RFC 3339 or epoch milliseconds, as epoch ms; 400 naming it otherwise. */
export function timeParam(name: string, value: string): number {
  const ms = /^-?\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw invalid(`${name}: expected an RFC 3339 timestamp or epoch milliseconds, got '${value}'`);
  return ms;
}
