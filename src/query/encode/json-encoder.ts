/**
 * JSON query results, written as bytes straight from DuckDB's vectors: no row objects, no
 * JSON.stringify over the data. Row-major `data`; timestamps RFC 3339 UTC; NaN/Infinity -> null;
 * BIGINT, HUGEINT and scale-0 decimals as exact integer digits (a client parsing into doubles
 * rounds beyond 2^53, one that parses big numbers keeps every digit); other decimals as numbers;
 * nested and exotic types through DuckDB's own JSON conversion.
 */
import { JsonDuckDBValueConverter, rawVector, stringBytes, type DuckDBDataChunk, type RawVector } from '../../duckdb/index.ts';
import { ByteSink } from './byte-sink.ts';
import { vectorWidth } from './column-kind.ts';
import type { ResultColumn } from './result.ts';
import { ShortStringCache } from './short-string-cache.ts';
import { TimestampWriter } from './timestamp-writer.ts';
import { dateText, decimalText, int64At, int64Text, numberView, uint64At, words } from './values.ts';

type Cell = (i: number) => void;

const TWO_53 = 9007199254740992;
const NULL = new TextEncoder().encode('null');
const quoted = (s: string) => new TextEncoder().encode(JSON.stringify(s));

/** Accumulates chunks into the `data` array; `finish` returns the whole body. */
export class JsonEncoder {
  private readonly sink = new ByteSink();
  private rows = 0;
  private readonly timestamps: (TimestampWriter | null)[];
  private readonly strings: (ShortStringCache<Uint8Array> | null)[];

  constructor(private readonly columns: readonly ResultColumn[]) {
    this.rowLoop = makeRowLoop(columns.length);
    this.timestamps = columns.map((c) => (c.kind.k === 'timestamp' ? new TimestampWriter(c.kind.unit) : null));
    this.strings = columns.map((c) => (c.kind.k === 'varchar' ? new ShortStringCache(quoted) : null));
    this.sink.utf8(`{"columns":${JSON.stringify(columns.map((c) => c.name))},"types":${JSON.stringify(columns.map((c) => c.type))},"data":[`);
  }

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Appends every row of `chunk`. */
  add(chunk: DuckDBDataChunk): void {
    const n = chunk.rowCount;
    if (n === 0) return;
    const raws = this.columns.map((c, ci) => (vectorWidth(c.kind) > 0 ? rawVector(chunk, ci, vectorWidth(c.kind)) : null));
    const cells = this.columns.map((_, ci) => this.cell(chunk, ci, raws[ci]!));
    const valid = raws.map((r) => r?.validity ?? null);
    this.rowLoop(this.sink, n, this.rows === 0, cells, valid);
    this.rows += n;
  }

  /** The complete response body as parts. */
  finish(meta: { executionTimeMs: number }): Uint8Array[] {
    const ms = Number.isFinite(meta.executionTimeMs) ? meta.executionTimeMs : 0;
    this.sink.ascii(`],"row_count":${this.rows},"execution_time_ms":${ms},"success":true}`);
    return this.sink.parts();
  }

  /**
   * The per-row loop, generated once per column count so each cell call site sees one function
   * (a shared loop over an array of closures is megamorphic and several times slower). The code is
   * built from column indexes only, never from names or data.
   */
  private readonly rowLoop: RowLoop;

  private cell(chunk: DuckDBDataChunk, ci: number, raw: RawVector | null): Cell {
    const kind = this.columns[ci]!.kind;
    const sink = this.sink;
    switch (kind.k) {
      case 'number': {
        const view = numberView(raw!, kind.wire);
        if (kind.wire.startsWith('float'))
          return (i) => {
            const x = view[i]!;
            if (x - x === 0) sink.float(x);
            else sink.bytes(NULL);
          };
        return (i) => sink.int(view[i]!);
      }
      case 'int64':
      case 'uint64': {
        const w = words(raw!);
        const signed = kind.k === 'int64';
        return (i) => {
          const x = signed ? int64At(w, i) : uint64At(w, i);
          if (x < TWO_53 && x > -TWO_53) sink.int(x);
          else sink.ascii(int64Text(w, i, signed));
        };
      }
      case 'bool': {
        const d = raw!.data;
        return (i) => sink.ascii(d[i] ? 'true' : 'false');
      }
      case 'timestamp': {
        const w = words(raw!);
        const tw = this.timestamps[ci]!;
        return (i) => tw.write(sink, w, i);
      }
      case 'date': {
        const w = words(raw!);
        return (i) => sink.ascii(`"${dateText(w[i]!)}"`);
      }
      case 'decimal':
        return (i) => sink.ascii(decimalText(raw!, kind, i));
      case 'varchar': {
        const read = this.strings[ci]!.reader(raw!);
        return (i) => sink.bytes(read(i));
      }
      case 'null':
        return () => sink.bytes(NULL);
      case 'blob': {
        const d = raw!.data;
        return (i) => sink.utf8(JSON.stringify(Buffer.from(stringBytes(d, i)).toString('base64')));
      }
      case 'text': {
        const values = chunk.convertColumnValues(ci, JsonDuckDBValueConverter);
        return (i) => sink.utf8(JSON.stringify(values[i] ?? null));
      }
    }
  }
}

type RowLoop = (sink: ByteSink, n: number, first: boolean, cells: Cell[], valid: (Uint8Array | null)[]) => void;

function makeRowLoop(columns: number): RowLoop {
  const decl: string[] = [];
  const body: string[] = [];
  for (let c = 0; c < columns; c++) {
    decl.push(`const c${c} = cells[${c}], v${c} = valid[${c}];`);
    if (c > 0) body.push('sink.byte(44);');
    body.push(`if (v${c} === null || (v${c}[i >> 3] & (1 << (i & 7))) !== 0) c${c}(i); else sink.bytes(NULL);`);
  }
  const src = `${decl.join('\n')}
for (let i = 0; i < n; i++) {
  if (i > 0 || !first) sink.byte(44);
  sink.byte(91);
  ${body.join('\n  ')}
  sink.byte(93);
}`;
  return new Function('NULL', `return function rowLoop(sink, n, first, cells, valid) {\n${src}\n}`)(NULL) as RowLoop;
}
