/**
 * A query result (whole columns in memory) as one Parquet file, for downloads: timestamps keep
 * microseconds, integers stay 64-bit, nulls stay null. Written by hyparquet-writer (snappy).
 */
import { parquetWriteBuffer } from 'hyparquet-writer';

/** One result column; `values` has one entry per row, null for a missing value. */
export type ResultFileColumn =
  | { name: string; type: 'timestamp_us'; values: (bigint | null)[] }
  | { name: string; type: 'int64'; values: (bigint | null)[] }
  | { name: string; type: 'double'; values: (number | null)[] }
  | { name: string; type: 'boolean'; values: (boolean | null)[] }
  | { name: string; type: 'string'; values: (string | null)[] };

const PHYSICAL = { timestamp_us: 'INT64', int64: 'INT64', double: 'DOUBLE', boolean: 'BOOLEAN', string: 'BYTE_ARRAY' } as const;

/** Encodes `columns` (equal lengths) as a Parquet file. */
export function writeResultParquet(columns: ResultFileColumn[]): Uint8Array {
  const rows = columns[0]?.values.length ?? 0;
  const schema = [
    { name: 'root', num_children: columns.length },
    ...columns.map((c) => ({
      name: c.name,
      type: PHYSICAL[c.type],
      repetition_type: 'OPTIONAL' as const,
      ...(c.type === 'timestamp_us' ? { converted_type: 'TIMESTAMP_MICROS' as const } : c.type === 'string' ? { converted_type: 'UTF8' as const } : {}),
    })),
  ];
  const buffer = parquetWriteBuffer({
    columnData: columns.map((c) => ({ name: c.name, data: c.values as never })),
    schema: schema as never,
    rowGroupSize: Math.max(1, Math.min(rows, 1_000_000)),
    createdBy: 'svc',
  });
  return new Uint8Array(buffer);
}
