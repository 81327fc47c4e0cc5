/**
 * Query results as files to download (CSV, Parquet, Arrow IPC). The result is run through the Arrow
 * encoder and held whole, up to EXPORT_MAX_BYTES of Arrow: a Parquet footer describes the whole file,
 * so it cannot leave before the last row.
 */
import { tableFromIPC, type Table, type Vector } from 'apache-arrow';
import { tooLarge } from '../lib/errors.ts';
import { writeResultParquet, type ResultFileColumn } from '../parquet/index.ts';
import { ArrowEncoder } from './encode/arrow-encoder.ts';
import type { QueryRequest, QueryService } from './query-service.ts';
import { streamQuery } from './result-stream.ts';

/** Formats a result can be exported in. */
export const EXPORT_FORMATS = ['csv', 'parquet', 'arrow'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The largest result an export holds (measured as Arrow IPC bytes). */
export const EXPORT_MAX_BYTES = 512 * 1024 * 1024;

/** An exported file. */
export interface ExportedFile {
  bytes: Uint8Array;
  contentType: string;
  extension: string;
  rows: number;
  /** The result was cut at the caller's max_rows_per_query (x-svc-rows-capped). */
  rowsCapped: boolean;
}

/** Runs `req` and encodes its whole result as `format`; 413 past EXPORT_MAX_BYTES. */
export async function exportQuery(queries: QueryService, req: QueryRequest, format: ExportFormat): Promise<ExportedFile> {
  const { body, rowsCapped } = await streamQuery(queries, req, (cols, emit) => new ArrowEncoder(cols, emit));
  const ipc = await readCapped(body);
  const table = tableFromIPC(ipc);
  const rows = table.numRows;
  if (format === 'arrow') return { bytes: ipc, contentType: 'application/vnd.apache.arrow.stream', extension: 'arrow', rows, rowsCapped };
  if (format === 'csv') return { bytes: new TextEncoder().encode(tableToCsv(table)), contentType: 'text/csv; charset=utf-8', extension: 'csv', rows, rowsCapped };
  return { bytes: writeResultParquet(resultColumns(table)), contentType: 'application/vnd.apache.parquet', extension: 'parquet', rows, rowsCapped };
}

async function readCapped(body: ReadableStream<Uint8Array> | Blob): Promise<Uint8Array> {
  if (body instanceof Blob) {
    if (body.size > EXPORT_MAX_BYTES) throw tooLarge(exportTooLarge());
    return new Uint8Array(await body.arrayBuffer());
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > EXPORT_MAX_BYTES) {
      await reader.cancel();
      throw tooLarge(exportTooLarge());
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

const exportTooLarge = () => `cannot export: the result is larger than ${EXPORT_MAX_BYTES >> 20} MB; narrow the time range or the columns, or stream it with POST /api/v1/query/arrow`;

/** Microseconds per unit of an Arrow timestamp (unit 0 s, 1 ms, 2 µs, 3 ns). */
const MICROS_PER_UNIT = [1_000_000n, 1000n, 1n];

/** Arrow columns as the Parquet writer's columns (integers wider than 32 bits kept exact). */
function resultColumns(table: Table): ResultFileColumn[] {
  return table.schema.fields.map((field, i) => {
    const vector = table.getChildAt(i)!;
    const type = field.type as { typeId: number; unit?: number; bitWidth?: number; isSigned?: boolean };
    const name = field.name;
    const typeName = String(field.type);
    if (typeName.startsWith('Timestamp')) {
      const raw = bigints(vector);
      const unit = type.unit ?? 2;
      return { name, type: 'timestamp_us', values: raw.map((v) => (v === null ? null : unit === 3 ? v / 1000n : v * MICROS_PER_UNIT[unit]!)) };
    }
    if (/^U?Int64$/.test(typeName)) return { name, type: 'int64', values: bigints(vector) };
    if (/^U?Int(8|16|32)$/.test(typeName)) return { name, type: 'int64', values: values(vector, (v) => BigInt(v as number)) };
    if (/^Float/.test(typeName)) return { name, type: 'double', values: values(vector, (v) => Number(v)) };
    if (typeName === 'Bool') return { name, type: 'boolean', values: values(vector, (v) => Boolean(v)) };
    return { name, type: 'string', values: values(vector, (v) => cellText(v)) };
  });
}

function values<T>(vector: Vector, map: (v: unknown) => T): (T | null)[] {
  const out = new Array<T | null>(vector.length);
  for (let r = 0; r < vector.length; r++) {
    const v: unknown = vector.get(r);
    out[r] = v === null || v === undefined ? null : map(v);
  }
  return out;
}

/** 64-bit values read from the column's own buffers: `get` would round them through doubles. */
function bigints(vector: Vector): (bigint | null)[] {
  const out: (bigint | null)[] = [];
  for (const data of vector.data) {
    const raw = data.values as BigInt64Array | BigUint64Array;
    for (let r = 0; r < data.length; r++) out.push(data.getValid(r) ? BigInt(raw[r]!) : null);
  }
  return out;
}

function cellText(v: unknown): string {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object' && v !== null) return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** RFC 4180 CSV with a header row; timestamps as RFC 3339 UTC with microseconds, nulls empty. */
export function tableToCsv(table: Table): string {
  const names = table.schema.fields.map((f) => f.name);
  const columns = table.schema.fields.map((field, i) => {
    const vector = table.getChildAt(i)!;
    const typeName = String(field.type);
    if (typeName.startsWith('Timestamp')) {
      const unit = (field.type as { unit?: number }).unit ?? 2;
      return bigints(vector).map((v) => (v === null ? '' : isoMicros(unit === 3 ? v / 1000n : v * MICROS_PER_UNIT[unit]!)));
    }
    if (/^U?Int64$/.test(typeName)) return bigints(vector).map((v) => (v === null ? '' : v.toString()));
    return values(vector, (v) => csvField(cellText(v))).map((v) => v ?? '');
  });
  const lines = [names.map(csvField).join(',')];
  for (let r = 0; r < table.numRows; r++) lines.push(columns.map((c) => c[r]).join(','));
  return lines.join('\n') + '\n';
}

function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function isoMicros(us: bigint): string {
  const ms = us / 1000n - (us % 1000n < 0n ? 1n : 0n);
  const frac = ((us % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return new Date(Number(ms)).toISOString().slice(0, 19) + '.' + frac.toString().padStart(6, '0') + 'Z';
}
