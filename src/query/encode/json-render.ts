/**
 * Doubles rendered as JSON text by DuckDB itself, for the JSON encoder. Turning a double into its
 * shortest text costs 55-75 ns in JavaScript and was half of a large JSON result's time; DuckDB's
 * JSON writer does it in native code on every core, while the scan still runs. Each run of adjacent
 * float columns becomes one `json_array(..)` text column; the encoder copies its bytes between the
 * brackets. Both writers print a double the same way (the shortest text that reads back as the
 * same value, integral values as `1.0`, exponents as `1e21`; see ByteSink.float), so a column looks
 * the same whichever path wrote it. NaN and infinities become null, as everywhere in JSON.
 */
import { VARCHAR } from '../../duckdb/index.ts';
import type { ResultColumn } from './result.ts';

/** A query's result wrapped for rendering: the SELECT list over its columns (named c0, c1, ...) and the columns it yields. */
export interface RenderedResult {
  select: string;
  columns: ResultColumn[];
}

const isFloat = (c: ResultColumn) => c.kind.k === 'number' && (c.kind.wire === 'float64' || c.kind.wire === 'float32');

/** The wrapping that renders the float columns of `columns`, or null when they have none. */
export function renderFloatsAsJson(columns: readonly ResultColumn[]): RenderedResult | null {
  if (!columns.some(isFloat)) return null;
  const select: string[] = [];
  const out: ResultColumn[] = [];
  for (let i = 0; i < columns.length; ) {
    const c = columns[i]!;
    if (!isFloat(c)) {
      select.push(`c${i}`);
      out.push(c);
      i++;
      continue;
    }
    const run: number[] = [];
    for (; i < columns.length && isFloat(columns[i]!); i++) run.push(i);
    // json_array is never NULL, so every row has text; a NULL element is written as null. It writes
    // NaN and infinities as bare words, so rows holding one take the branch that nulls them (a
    // CASE per value on every row cost 25% more).
    const all = run.map((k) => `c${k}`).join(', ');
    const nulled = run.map((k) => `CASE WHEN isfinite(c${k}) THEN c${k} END`).join(', ');
    const finite = run.map((k) => `isfinite(c${k})`).join(' AND ');
    select.push(`CASE WHEN ${finite} IS NOT FALSE THEN json_array(${all}) ELSE json_array(${nulled}) END::VARCHAR`);
    out.push({
      name: run.map((k) => columns[k]!.name).join(','),
      type: 'JSON',
      duckType: VARCHAR,
      kind: { k: 'json', names: run.map((k) => columns[k]!.name), types: run.map((k) => columns[k]!.type) },
    });
  }
  return { select: select.join(', '), columns: out };
}
