/**
 * Writes JSON rows (`[v,v,...]` joined by commas) from raw column memory into a ByteSink. Pure: no
 * DuckDB calls, so the same code runs on the main thread and in the JSON worker; strings longer
 * than 12 bytes (stored outside the vector) come copied out beside it, and kinds only DuckDB can
 * render (`text`, `blob`) come as ready-made cells from the caller.
 */
import type { LongStrings, RawVector } from '../../duckdb/index.ts';
import type { ByteSink } from './byte-sink.ts';
import type { ColumnKind } from './column-kind.ts';
import { ShortStringCache } from './short-string-cache.ts';
import { TimestampWriter } from './timestamp-writer.ts';
import { dateText, decimalText, int64At, int64Text, numberView, uint64At, words } from './values.ts';

/** Writes the value of row `i` (valid rows only). */
export type Cell = (i: number) => void;

/** One column of one chunk; `strings` holds its strings over 12 bytes (VARCHAR and rendered JSON). */
export interface RowColumn {
  raw: RawVector | null;
  strings?: LongStrings;
  /** A ready-made cell for kinds this file cannot read (`text`, `blob`). */
  cell?: Cell;
}

const TWO_53 = 9007199254740992;
const NULL = new TextEncoder().encode('null');
const quoted = (s: string) => new TextEncoder().encode(JSON.stringify(s));
/**
 * One cache of quoted short strings for every column of every result in this thread: a string's JSON
 * form depends on its bytes alone, and building a cache per column cost more than a small result.
 */
const quotedStrings = new ShortStringCache(quoted);

/** Kinds this file reads itself (a chunk made only of these can be encoded anywhere). */
export function portableKind(kind: ColumnKind): boolean {
  return kind.k !== 'text' && kind.k !== 'blob';
}

/** Row writer for one result's columns; keeps per-column caches across chunks. */
export class JsonRows {
  private readonly timestamps: (TimestampWriter | null)[];
  private readonly loop: RowLoop;

  constructor(private readonly kinds: readonly ColumnKind[]) {
    this.loop = rowLoopFor(kinds.length);
    this.timestamps = kinds.map((k) => (k.k === 'timestamp' ? new TimestampWriter(k.unit) : null));
  }

  /** Writes rows `from` to `to` - 1; `first` is true when no row precedes them in the output. */
  write(sink: ByteSink, cols: readonly RowColumn[], from: number, to: number, first: boolean): void {
    const cells = cols.map((c, ci) => c.cell ?? this.cell(sink, ci, c));
    this.loop(sink, from, to, first, cells, cols.map((c) => c.raw?.validity ?? null));
  }

  private cell(sink: ByteSink, ci: number, col: RowColumn): Cell {
    const kind = this.kinds[ci]!;
    const raw = col.raw!;
    switch (kind.k) {
      case 'number': {
        const view = numberView(raw, kind.wire);
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
        const w = words(raw);
        const signed = kind.k === 'int64';
        return (i) => {
          const x = signed ? int64At(w, i) : uint64At(w, i);
          if (x < TWO_53 && x > -TWO_53) sink.int(x);
          else sink.ascii(int64Text(w, i, signed));
        };
      }
      case 'bool': {
        const d = raw.data;
        return (i) => sink.ascii(d[i] ? 'true' : 'false');
      }
      case 'timestamp': {
        const w = words(raw);
        const tw = this.timestamps[ci]!;
        return (i) => tw.write(sink, w, i);
      }
      case 'date': {
        const w = words(raw);
        return (i) => sink.ascii(`"${dateText(w[i]!)}"`);
      }
      case 'decimal':
        return (i) => sink.ascii(decimalText(raw, kind, i));
      case 'varchar': {
        const { bytes, offsets } = col.strings!;
        const read = quotedStrings.reader(raw, (i, len) => bytes.subarray(offsets[i]!, offsets[i]! + len));
        return (i) => sink.bytes(read(i));
      }
      case 'json': {
        // `[v,v]` from DuckDB: the values between the brackets.
        const d = raw.data;
        const w = headerWords(raw);
        const { bytes, offsets } = col.strings!;
        return (i) => {
          const len = w[i * 4]!;
          if (len <= 12) sink.range(d, i * 16 + 5, i * 16 + 3 + len);
          else sink.range(bytes, offsets[i]! + 1, offsets[i]! + len - 1);
        };
      }
      case 'null':
        return () => sink.bytes(NULL);
      case 'blob':
      case 'text':
        throw new Error(`cannot encode a ${kind.k} column without a ready-made cell`);
    }
  }
}

/** The 16-byte string headers of `raw` as 32-bit words (word 4i is the length of string i). */
function headerWords(raw: RawVector): Int32Array {
  const d = raw.data;
  return d.byteOffset % 4 === 0 ? new Int32Array(d.buffer, d.byteOffset, d.byteLength >> 2) : new Int32Array(d.slice().buffer);
}

type RowLoop = (sink: ByteSink, from: number, to: number, first: boolean, cells: Cell[], valid: (Uint8Array | null)[]) => void;

const rowLoops = new Map<number, RowLoop>();

/** The row loop for `columns` columns, compiled on first use and kept: a fresh one per result never gets optimized. */
function rowLoopFor(columns: number): RowLoop {
  let loop = rowLoops.get(columns);
  if (!loop) rowLoops.set(columns, (loop = makeRowLoop(columns)));
  return loop;
}

/**
 * The per-row loop, generated once per column count so each cell call site sees one function
 * (a shared loop over an array of closures is megamorphic and several times slower). The code is
 * built from column indexes only, never from names or data.
 */
function makeRowLoop(columns: number): RowLoop {
  const decl: string[] = [];
  const body: string[] = [];
  for (let c = 0; c < columns; c++) {
    decl.push(`const c${c} = cells[${c}], v${c} = valid[${c}];`);
    if (c > 0) body.push('sink.byte(44);');
    body.push(`if (v${c} === null || (v${c}[i >> 3] & (1 << (i & 7))) !== 0) c${c}(i); else sink.bytes(NULL);`);
  }
  const src = `${decl.join('\n')}
for (let i = from; i < to; i++) {
  if (i > from || !first) sink.byte(44);
  sink.byte(91);
  ${body.join('\n  ')}
  sink.byte(93);
}`;
  return new Function('NULL', `return function rowLoop(sink, from, to, first, cells, valid) {\n${src}\n}`)(NULL) as RowLoop;
}
