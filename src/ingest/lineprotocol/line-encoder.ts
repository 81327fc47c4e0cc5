/**
 * ColumnBatch rows back to line protocol, with microsecond timestamps (read back with precision `us`):
 * the form flushes that kept failing leave their rows in, so an operator can read them and send them
 * again with `svc write`. Tag columns become tags, other columns fields (integers with `i`).
 *
 * What line protocol cannot carry is said, not hidden: a line break in a value is written as the two
 * characters `\n` (or `\r`), a float that is not finite is left out, and a row without any field value
 * (line protocol needs one) is written as a comment starting `# no field value: `.
 */
import type { ColumnBatch } from '../column-batch.ts';

const KEY_SPECIALS = /[\\, =\n\r]/g;
const FIELD_SPECIALS = /[\\"\n\r]/g;
const escapeChar = (c: string) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\${c}`);

/** A measurement, tag key, tag value or field key with `,`, ` `, `=` and `\` escaped. */
const escapeKey = (s: string) => s.replace(KEY_SPECIALS, escapeChar);

/** Rows [from, to) of `batch` as line-protocol lines, each ending in a newline. */
export function encodeLineProtocol(batch: ColumnBatch, from = 0, to = batch.length): string {
  const measurement = escapeKey(batch.measurement);
  const tags: { key: string; values: readonly (string | null)[] }[] = [];
  const fields: { key: string; text: (row: number) => string | null }[] = [];
  for (const [name, col] of batch.columns) {
    const key = escapeKey(name);
    if (col.type === 'string' && col.tag) tags.push({ key, values: col.values });
    else if (col.type === 'string') fields.push({ key, text: (r) => (col.values[r] == null ? null : `"${col.values[r]!.replace(FIELD_SPECIALS, escapeChar)}"`) });
    else {
      const valid = col.valid;
      const present = (r: number) => valid === null || valid[r] !== 0;
      if (col.type === 'float64') fields.push({ key, text: (r) => (present(r) && Number.isFinite(col.values[r]!) ? String(col.values[r]) : null) });
      else if (col.type === 'int64') fields.push({ key, text: (r) => (present(r) ? `${col.values[r]}i` : null) });
      else fields.push({ key, text: (r) => (present(r) ? (col.values[r] ? 'true' : 'false') : null) });
    }
  }
  let out = '';
  for (let r = from; r < to; r++) {
    let line = measurement;
    for (const t of tags) {
      const v = t.values[r];
      // An empty tag value cannot be written; InfluxDB drops such tags too.
      if (v != null && v !== '') line += `,${t.key}=${escapeKey(v)}`;
    }
    let sep = ' ';
    for (const f of fields) {
      const text = f.text(r);
      if (text === null) continue;
      line += `${sep}${f.key}=${text}`;
      sep = ',';
    }
    line += ` ${batch.time[r]}\n`;
    out += sep === ' ' ? `# no field value: ${line}` : line;
  }
  return out;
}
