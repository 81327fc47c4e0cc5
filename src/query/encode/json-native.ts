/**
 * JSON rows written by C straight from DuckDB's vectors (chunks read in place, see
 * duckdb/result-chunks.ts). The JavaScript row writer (json-rows.ts) pays a call per value and was
 * most of a large JSON result's time; here a chunk is one call. Doubles are not formatted here:
 * DuckDB renders them (json-render.ts) and their text is copied. Kinds this writer does not know
 * keep the whole result on the JavaScript writer; a value it will not write (a year outside
 * 0000-9999) hands that one row back to it. Both produce the same bytes, which the tests compare
 * (tests/native-twins.test.ts, on fuzzed chunks). The C is src/native/json-rows.c.
 */
import type { ResultChunk } from '../../duckdb/index.ts';
import { C_SOURCES, compileC, nativeOnce } from '../../native/index.ts';
import type { ByteSink } from './byte-sink.ts';
import type { ColumnKind, TimeUnit } from './column-kind.ts';

const KIND_CODES: Record<string, number> = { int8: 0, int16: 1, int32: 2, uint8: 3, uint16: 4, uint32: 5 };
const UNITS: Record<TimeUnit, number> = { s: 0, ms: 1, us: 2, ns: 3 };
const [I64, U64, BOOL, TS, DATE, VARCHAR, JSON_TEXT, NULL_KIND] = [6, 7, 8, 9, 10, 11, 12, 13];
/** Columns the C writer takes (its per-call tables are this long); wider results use the JavaScript writer. */
const MAX_COLUMNS = 256;
const DONE = 0;
const FULL = 1;

/** The C writer's code and parameter for `kind`, or null when only the JavaScript writer knows it. */
function nativeCode(kind: ColumnKind): [number, number] | null {
  switch (kind.k) {
    case 'number':
      return kind.wire in KIND_CODES ? [KIND_CODES[kind.wire]!, 0] : null;
    case 'int64':
      return [I64, 0];
    case 'uint64':
      return [U64, 0];
    case 'bool':
      return [BOOL, 0];
    case 'timestamp':
      return [TS, UNITS[kind.unit]];
    case 'date':
      return [DATE, 0];
    case 'decimal':
      // Scale 0 is an integer; HUGEINT and fractions stay with the JavaScript writer.
      if (kind.scale !== 0 || kind.width === 16) return null;
      return [kind.width === 2 ? KIND_CODES.int16! : kind.width === 4 ? KIND_CODES.int32! : I64, 0];
    case 'varchar':
      return [VARCHAR, 0];
    case 'json':
      return [JSON_TEXT, 0];
    case 'null':
      return [NULL_KIND, 0];
    default:
      return null;
  }
}

type Symbols = ReturnType<typeof compile>;

function compile() {
  // Every integer argument is 64-bit: with 32-bit ones mixed in, bun:ffi passed wrong values to TinyCC code.
  const s = compileC('json-rows', C_SOURCES['json-rows'], {
    svc_json_init: { args: [], returns: 'void' },
    svc_json_rows: { args: ['ptr', 'i64', 'i64', 'i64', 'i64', 'ptr', 'i64', 'i64', 'ptr'], returns: 'i32' },
  });
  s.svc_json_init();
  return s;
}

/** The compiled writer; without TinyCC, the JavaScript writer gives the same bytes. */
const symbols = nativeOnce('JSON writer', compile);

/** Writes one row of the chunk being written with the JavaScript writer (`first`: no comma before it). */
export type RowHandback = (row: number, first: boolean) => void;

/** The C row writer for one result's columns. */
export class NativeJsonRows {
  private readonly desc: Float64Array;
  private readonly res = new Float64Array(3);

  private constructor(
    private readonly c: Symbols,
    codes: [number, number][],
  ) {
    this.desc = new Float64Array(codes.length * 4);
    codes.forEach(([code, param], ci) => {
      this.desc[4 * ci] = code;
      this.desc[4 * ci + 1] = param;
    });
  }

  /** A writer for `kinds`, or null when the C side is unavailable or a kind is not one it writes. */
  static for(kinds: readonly ColumnKind[]): NativeJsonRows | null {
    const c = symbols();
    if (!c) return null;
    const codes = kinds.map(nativeCode);
    if (codes.length > MAX_COLUMNS || codes.some((x) => x === null)) return null;
    return new NativeJsonRows(c, codes as [number, number][]);
  }

  /**
   * Writes every row of `chunk` (whose `addresses` must be set) into `sink`; rows the C side hands
   * back go to `handback`. `first`: no comma before the first row.
   */
  write(sink: ByteSink, chunk: ResultChunk, first: boolean, handback: RowHandback): void {
    const addresses = chunk.addresses!;
    const n = chunk.rowCount;
    const desc = this.desc;
    const columns = desc.length / 4;
    for (let ci = 0; ci < columns; ci++) {
      desc[4 * ci + 2] = addresses[1 + 2 * ci]!;
      desc[4 * ci + 3] = addresses[2 + 2 * ci]!;
    }
    const res = this.res;
    let row = 0;
    while (row < n) {
      const next = this.c.svc_json_rows(desc, columns, row, n, first && row === 0 ? 1 : 0, sink.buf, sink.pos, sink.buf.length, res);
      sink.pos += res[0]!;
      const status = res[1]!;
      if (status === DONE) return;
      if (status === FULL) {
        // A fresh block, at least as large as the C side says the next row needs (a row may be larger than a block).
        sink.reserve(Math.max(res[2]!, sink.buf.length - sink.pos + 1));
      } else {
        handback(next, first && next === 0);
        row = next + 1;
        continue;
      }
      row = next;
    }
  }
}
