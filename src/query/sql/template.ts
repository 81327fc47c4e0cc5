/**
 * The rewritten SQL as a reusable template. Turning the syntax tree back into text
 * (`json_deserialize_sql`) is a DuckDB round trip of about a millisecond, and most of it would be
 * repeated: dashboards send the same SQL again and only the file lists change. So the tree is
 * deserialized once with a marker string literal in place of each reference's file list, and later
 * runs splice the current (quoted) paths in place of the markers. The markers hold a random
 * per-process nonce, and a template is only kept when each marker occurs exactly once in it and
 * the user's SQL never mentions the nonce, so the splice can only ever hit the slot it was made for.
 */
import { randomBytes } from 'node:crypto';
import { literal } from './rewrite.ts';
import { setBounded } from '../../lib/bounded-map.ts';

const NONCE = `svc_files_${randomBytes(12).toString('hex')}`;
const MAX_ENTRIES = 256;
const MAX_SQL = 16_384;
const templates = new Map<string, string>();

/** The string literal that stands for reference `i`'s file list while the template is made. */
export const fileMarker = (i: number): string => `${NONCE}_${i}`;

/** Cache key of a query whose references have the given source shapes; null when it must not be cached. */
export function templateKey(sql: string, database: string | undefined, shapes: readonly string[]): string | null {
  if (sql.length > MAX_SQL || sql.includes(NONCE)) return null;
  return `${database ?? ''}\u0000${shapes.join('\u0001')}\u0000${sql}`;
}

/** A cached template, or undefined. */
export function cachedTemplate(key: string | null): string | undefined {
  if (key === null) return undefined;
  const t = templates.get(key);
  if (t !== undefined) {
    // Re-inserted: the map's order is the eviction order.
    templates.delete(key);
    templates.set(key, t);
  }
  return t;
}

/**
 * Checks that every marker of the `refs` references with files occurs exactly once in `template`
 * and stores it under `key` (when not null). Throws when a marker is missing or repeated: the
 * splice would be ambiguous (cannot happen with DuckDB's deserializer, so it is a bug).
 */
export function storeTemplate(key: string | null, template: string, withFiles: readonly number[]): void {
  for (const i of withFiles) {
    const m = `'${fileMarker(i)}'`;
    const at = template.indexOf(m);
    if (at < 0 || template.indexOf(m, at + 1) >= 0) throw new Error(`cannot build the query: file list slot ${i} not found exactly once in the rewritten SQL`);
  }
  if (key === null) return;
  setBounded(templates, key, template, MAX_ENTRIES);
}

/** `template` with each reference's marker replaced by its quoted file paths (`files[i]`, empty for references without files). */
export function fillTemplate(template: string, files: readonly (readonly string[])[]): string {
  // Slots are found in the template itself, never in text already spliced in.
  const slots = files
    .map((paths, i) => ({ paths, marker: `'${fileMarker(i)}'` }))
    .filter((s) => s.paths.length > 0)
    .map((s) => ({ ...s, at: template.indexOf(s.marker) }))
    .sort((a, b) => a.at - b.at);
  let out = '';
  let last = 0;
  for (const s of slots) {
    out += template.slice(last, s.at) + s.paths.map(literal).join(', ');
    last = s.at + s.marker.length;
  }
  return out + template.slice(last);
}
