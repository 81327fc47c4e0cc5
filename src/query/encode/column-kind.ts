/**
 * How each DuckDB result type is read and sent. One classification shared by the three encoders,
 * so JSON, Arrow and MessagePack always agree on a column's meaning: decimals and HUGEINT become
 * int64 (scale 0) or float64 numbers, timestamps keep their unit, and types with no fast path are
 * rendered as DuckDB's own text.
 */
import { DuckDBTypeId, type DuckDBType } from '../../duckdb/index.ts';

/** Fixed-width numeric kinds read through a typed-array view, with the MessagePack wire name. */
export type NumberKind = 'int8' | 'int16' | 'int32' | 'uint8' | 'uint16' | 'uint32' | 'float32' | 'float64';

/** Timestamp units as in the wire names `timestamp[<unit>]`. */
export type TimeUnit = 's' | 'ms' | 'us' | 'ns';

/** One result column's reading plan. */
export type ColumnKind =
  | { k: 'number'; wire: NumberKind; width: 1 | 2 | 4 | 8 }
  | { k: 'int64' | 'uint64' }
  | { k: 'bool' }
  | { k: 'timestamp'; unit: TimeUnit; tz: boolean }
  | { k: 'date' }
  /** DECIMAL stored in `width` bytes (2, 4, 8 or 16) with `scale` digits after the point; HUGEINT is width 16, scale 0. */
  | { k: 'decimal'; width: 2 | 4 | 8 | 16; scale: number; signed: boolean }
  | { k: 'varchar' }
  | { k: 'blob' }
  | { k: 'null' }
  /** Sent as DuckDB's text rendering; `wire` is the MessagePack type name. */
  | { k: 'text'; wire: string }
  /**
   * Adjacent result columns that DuckDB rendered as one JSON array text (`[v,v]`) for the JSON
   * encoder (see encode/json-render.ts); `names` and `types` are those of the columns it stands for.
   */
  | { k: 'json'; names: string[]; types: string[] };

const NUMBERS: Partial<Record<DuckDBTypeId, [NumberKind, 1 | 2 | 4 | 8]>> = {
  [DuckDBTypeId.TINYINT]: ['int8', 1],
  [DuckDBTypeId.SMALLINT]: ['int16', 2],
  [DuckDBTypeId.INTEGER]: ['int32', 4],
  [DuckDBTypeId.UTINYINT]: ['uint8', 1],
  [DuckDBTypeId.USMALLINT]: ['uint16', 2],
  [DuckDBTypeId.UINTEGER]: ['uint32', 4],
  [DuckDBTypeId.FLOAT]: ['float32', 4],
  [DuckDBTypeId.DOUBLE]: ['float64', 8],
};

const TIMESTAMPS: Partial<Record<DuckDBTypeId, [TimeUnit, boolean]>> = {
  [DuckDBTypeId.TIMESTAMP_S]: ['s', false],
  [DuckDBTypeId.TIMESTAMP_MS]: ['ms', false],
  [DuckDBTypeId.TIMESTAMP]: ['us', false],
  [DuckDBTypeId.TIMESTAMP_NS]: ['ns', false],
  [DuckDBTypeId.TIMESTAMP_TZ]: ['us', true],
};

/** Types Arrow would carry but the wire names only as text (spec: `string_encoded`). */
const STRING_ENCODED = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIME,
  DuckDBTypeId.TIME_NS,
  DuckDBTypeId.TIME_TZ,
  DuckDBTypeId.INTERVAL,
  DuckDBTypeId.UUID,
]);

/** Classifies a DuckDB result type. */
export function columnKind(type: DuckDBType): ColumnKind {
  const id = type.typeId;
  const num = NUMBERS[id];
  if (num) return { k: 'number', wire: num[0], width: num[1] };
  const ts = TIMESTAMPS[id];
  if (ts) return { k: 'timestamp', unit: ts[0], tz: ts[1] };
  switch (id) {
    case DuckDBTypeId.BIGINT:
      return { k: 'int64' };
    case DuckDBTypeId.UBIGINT:
      return { k: 'uint64' };
    case DuckDBTypeId.BOOLEAN:
      return { k: 'bool' };
    case DuckDBTypeId.DATE:
      return { k: 'date' };
    case DuckDBTypeId.HUGEINT:
      return { k: 'decimal', width: 16, scale: 0, signed: true };
    case DuckDBTypeId.UHUGEINT:
      return { k: 'decimal', width: 16, scale: 0, signed: false };
    case DuckDBTypeId.DECIMAL: {
      const { width, scale } = type as DuckDBType & { width: number; scale: number };
      const bytes = width <= 4 ? 2 : width <= 9 ? 4 : width <= 18 ? 8 : 16;
      return { k: 'decimal', width: bytes, scale, signed: true };
    }
    case DuckDBTypeId.VARCHAR:
      return { k: 'varchar' };
    case DuckDBTypeId.BLOB:
      return { k: 'blob' };
    case DuckDBTypeId.SQLNULL:
      return { k: 'null' };
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return { k: 'text', wire: 'list' };
    case DuckDBTypeId.STRUCT:
      return { k: 'text', wire: 'struct' };
    case DuckDBTypeId.MAP:
      return { k: 'text', wire: 'map' };
  }
  if (STRING_ENCODED.has(id)) return { k: 'text', wire: 'string_encoded' };
  return { k: 'text', wire: `unknown:${type.toString()}` };
}

/** The MessagePack wire type name of a column (spec, "Query result (MessagePack)"). */
export function wireTypeName(kind: ColumnKind): string {
  switch (kind.k) {
    case 'number':
      return kind.wire;
    case 'int64':
    case 'uint64':
      return kind.k;
    case 'bool':
      return 'bool';
    case 'timestamp':
      return kind.tz ? `timestamp[${kind.unit}, tz=UTC]` : `timestamp[${kind.unit}]`;
    case 'date':
      return 'date32';
    case 'decimal':
      return kind.scale === 0 ? (kind.signed ? 'int64' : 'uint64') : 'float64';
    case 'varchar':
      return 'utf8';
    case 'blob':
      return 'binary';
    case 'null':
      return 'null';
    case 'text':
      return kind.wire;
    case 'json':
      return 'utf8';
  }
}

/** Byte width of one value in a DuckDB vector of this kind (16 for string headers; 0 when read through node-api). */
export function vectorWidth(kind: ColumnKind): number {
  switch (kind.k) {
    case 'number':
      return kind.width;
    case 'int64':
    case 'uint64':
    case 'timestamp':
      return 8;
    case 'bool':
      return 1;
    case 'date':
      return 4;
    case 'decimal':
      return kind.width;
    case 'varchar':
    case 'blob':
    case 'json':
      return 16;
    case 'null':
    case 'text':
      return 0;
  }
}
