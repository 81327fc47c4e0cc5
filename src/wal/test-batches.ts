/** Test helpers: ColumnBatches built from plain rows, and back, so tests compare readable values. */
import type { Column, ColumnBatch } from '../ingest/index.ts';

type Value = number | bigint | boolean | string | null;

/** A batch with `time` (µs) and the given columns; numbers become float64, bigints int64. A null marks a NULL. */
export function makeBatch(measurement: string, time: number[], cols: Record<string, { values: Value[]; tag?: boolean }>): ColumnBatch {
  const n = time.length;
  const columns = new Map<string, Column>();
  for (const [name, { values, tag }] of Object.entries(cols)) {
    const sample = values.find((v) => v !== null);
    const valid = values.some((v) => v === null) ? Uint8Array.from(values, (v) => (v === null ? 0 : 1)) : null;
    if (typeof sample === 'string' || sample === undefined)
      columns.set(name, { type: 'string', values: values as (string | null)[], valid: null, tag: tag ?? false });
    else if (typeof sample === 'bigint')
      columns.set(name, { type: 'int64', values: BigInt64Array.from(values, (v) => (v as bigint | null) ?? 0n), valid, tag: false });
    else if (typeof sample === 'boolean')
      columns.set(name, { type: 'bool', values: Uint8Array.from(values, (v) => (v ? 1 : 0)), valid, tag: false });
    else columns.set(name, { type: 'float64', values: Float64Array.from(values, (v) => (v as number | null) ?? 0), valid, tag: false });
  }
  return { measurement, length: n, time: Float64Array.from(time), columns };
}

/** Rows of a batch as plain objects (NULLs as null), for equality checks. */
export function rowsOf(batch: ColumnBatch): Record<string, Value>[] {
  const rows: Record<string, Value>[] = [];
  for (let i = 0; i < batch.length; i++) {
    const row: Record<string, Value> = { time: batch.time[i]! };
    for (const [name, col] of batch.columns) {
      if (col.type === 'string') row[name] = col.values[i] ?? null;
      else if (col.valid && col.valid[i] === 0) row[name] = null;
      else row[name] = col.type === 'bool' ? col.values[i] === 1 : col.values[i]!;
    }
    rows.push(row);
  }
  return rows;
}

/** `n` rows of a typical shape: host tag of 100 values, region of 10, five float fields, an int id. */
export function sampleBatch(n: number, start = 0, measurement = 'cpu'): ColumnBatch {
  const time = new Float64Array(n);
  const id = new BigInt64Array(n);
  const host: string[] = new Array(n);
  const region: string[] = new Array(n);
  const hosts = Array.from({ length: 100 }, (_, i) => `host-${i}`);
  const regions = Array.from({ length: 10 }, (_, i) => `region-${i}`);
  const columns = new Map<string, Column>();
  for (let i = 0; i < n; i++) {
    time[i] = 1_700_000_000_000_000 + (start + i) * 1000;
    id[i] = BigInt(start + i);
    host[i] = hosts[(start + i) % 100]!;
    region[i] = regions[(start + i) % 10]!;
  }
  columns.set('host', { type: 'string', values: host, valid: null, tag: true });
  columns.set('region', { type: 'string', values: region, valid: null, tag: true });
  for (const f of ['usage_user', 'usage_system', 'usage_idle', 'load1', 'load5']) {
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) v[i] = (start + i) * 0.5;
    columns.set(f, { type: 'float64', values: v, valid: null, tag: false });
  }
  columns.set('id', { type: 'int64', values: id, valid: null, tag: false });
  return { measurement, length: n, time, columns };
}
