/**
 * A query result as a ColumnBatch for the write path: the encoder the continuous-query service hands
 * to the query engine. `time` (a TIMESTAMP or DATE column named `time`) becomes the batch time; numbers
 * become float64 (fractional types) or int64 (integer types, DECIMAL with scale 0), booleans bool,
 * VARCHAR columns tags (as for columnar MessagePack writes), and any other type its text as a string
 * field. A column of only NULLs (type NULL) is left out. Results of continuous queries are aggregates,
 * so values are read through node-api's value objects rather than raw vectors.
 */
import type { ResultChunk } from '../../duckdb/index.ts';
import type { Column, ColumnBatch } from '../../ingest/index.ts';
import { invalid } from '../../lib/errors.ts';
import type { ChunkEncoder, ResultColumn } from '../../query/index.ts';

type Target = 'float64' | 'int64' | 'bool' | 'tag' | 'text' | 'skip';

function targetOf(c: ResultColumn): Target {
  const k = c.kind;
  if (k.k === 'number') return k.wire === 'float32' || k.wire === 'float64' ? 'float64' : 'int64';
  if (k.k === 'int64' || k.k === 'uint64') return 'int64';
  if (k.k === 'decimal') return k.scale === 0 ? 'int64' : 'float64';
  if (k.k === 'bool') return 'bool';
  if (k.k === 'varchar') return 'tag';
  if (k.k === 'null') return 'skip';
  return 'text';
}

/** Epoch µs of a TIMESTAMP (any unit) or DATE value from node-api. */
function micros(v: unknown): number | null {
  if (v === null || typeof v !== 'object') return null;
  const o = v as { micros?: bigint; millis?: bigint; seconds?: bigint; nanos?: bigint; days?: number };
  if (typeof o.micros === 'bigint') return Number(o.micros);
  if (typeof o.millis === 'bigint') return Number(o.millis) * 1000;
  if (typeof o.seconds === 'bigint') return Number(o.seconds) * 1_000_000;
  if (typeof o.nanos === 'bigint') return Number(o.nanos / 1000n);
  if (typeof o.days === 'number') return o.days * 86_400_000_000;
  return null;
}

function asNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return (v as { toDouble(): number }).toDouble();
}

function asBigInt(v: unknown): bigint {
  if (typeof v === 'bigint') return BigInt.asIntN(64, v);
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  return BigInt.asIntN(64, (v as { value: bigint }).value);
}

/** Collects result chunks into one ColumnBatch of `measurement`; throws 400 when there is no usable `time` column. */
export class BatchCollector implements ChunkEncoder {
  private readonly time: number[] = [];
  private readonly values: unknown[][];
  private readonly timeIndex: number;
  private readonly targets: Target[];

  constructor(
    private readonly columns: ResultColumn[],
    private readonly measurement: string,
  ) {
    this.timeIndex = columns.findIndex((c) => c.name === 'time');
    const t = columns[this.timeIndex];
    if (!t || (t.kind.k !== 'timestamp' && t.kind.k !== 'date'))
      throw invalid(`query: the result needs a TIMESTAMP column named 'time' (for example: SELECT time_bucket(INTERVAL '1 minute', time) AS time, ...); got ${columns.map((c) => `${c.name} ${c.type}`).join(', ')}`);
    this.targets = columns.map((c, i) => (i === this.timeIndex ? 'skip' : targetOf(c)));
    this.values = columns.map(() => []);
  }

  get rowCount(): number {
    return this.time.length;
  }

  add(result: ResultChunk): void {
    const chunk = result.node;
    const times = chunk.getColumnValues(this.timeIndex);
    times.forEach((v, row) => {
      const t = micros(v);
      if (t === null) throw invalid(`query: result row ${this.time.length + row + 1} has a NULL or unreadable time`);
    });
    for (const v of times) this.time.push(micros(v)!);
    this.targets.forEach((target, i) => {
      if (target !== 'skip') this.values[i]!.push(...chunk.getColumnValues(i));
    });
  }

  /** The collected rows as one batch (length 0 when the query returned nothing). */
  batch(): ColumnBatch {
    const n = this.time.length;
    const columns = new Map<string, Column>();
    this.targets.forEach((target, i) => {
      if (target === 'skip') return;
      const vals = this.values[i]!;
      const nulls = vals.some((v) => v === null);
      const valid = nulls ? Uint8Array.from(vals, (v) => (v === null ? 0 : 1)) : null;
      const name = this.columns[i]!.name;
      if (target === 'float64') columns.set(name, { type: 'float64', values: Float64Array.from(vals, (v) => (v === null ? 0 : asNumber(v))), valid, tag: false });
      else if (target === 'int64') columns.set(name, { type: 'int64', values: BigInt64Array.from(vals, (v) => (v === null ? 0n : asBigInt(v))), valid, tag: false });
      else if (target === 'bool') columns.set(name, { type: 'bool', values: Uint8Array.from(vals, (v) => (v === true ? 1 : 0)), valid, tag: false });
      else columns.set(name, { type: 'string', values: vals.map((v) => (v === null ? null : String(v))), valid: null, tag: target === 'tag' });
    });
    return { measurement: this.measurement, length: n, time: Float64Array.from(this.time), columns };
  }
}
