const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const ISO_RE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses a `since`/`until` value into epoch microseconds: relative `<n>m|h|d|w` (that long before
 * `nowMs`) or an ISO 8601 timestamp (no zone means UTC). Null when malformed.
 */
export function parseTimeInput(text: string, nowMs: number): number | null {
  const t = text.trim();
  const rel = /^(\d+)([mhdw])$/.exec(t);
  if (rel) return (nowMs - Number(rel[1]) * UNIT_MS[rel[2]!]!) * 1000;
  if (!ISO_RE.test(t)) return null;
  // Date.parse reads a zone-less date-time as local time; the API promises UTC.
  const zoned = /[T ]\d{2}:\d{2}/.test(t) && !/(Z|[+-]\d{2}:?\d{2})$/.test(t) ? `${t.replace(' ', 'T')}Z` : t.replace(' ', 'T');
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) return null;
  const frac = /\.(\d+)/.exec(t)?.[1] ?? '';
  const extraMicros = frac.length > 3 ? Number(frac.slice(3, 6).padEnd(3, '0')) : 0;
  return ms * 1000 + extraMicros;
}

/** The accepted forms, for error messages. */
export const TIME_INPUT_RULE = 'must be a relative time like 30m, 2h, 7d, 1w or an ISO 8601 timestamp';
