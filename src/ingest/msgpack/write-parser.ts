/**
 * The MessagePack write payload -> ColumnBatches. Accepted shapes: the columnar map
 * `{m, columns: {time: [...], col: [...]}}`, the row map `{m, t, tags, fields}`, a top-level
 * array of either, and `{batch: [...]}` wrapping such an array.
 */
import { invalid } from '../../lib/errors.ts';
import { measurementNameProblem } from '../../lib/names.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { decodeColumns } from './columnar.ts';
import { MsgpackReader, T_ARRAY, T_EXT, T_MAP, T_STRING, TYPE_WORDS } from './msgpack-reader.ts';
import { type RowParts, RowGroups } from './rows.ts';

/** Options of `parseMsgpackWrite`: the time (epoch µs) of rows that carry none. */
export interface MsgpackWriteOptions {
  now: number;
}

const MAX_BATCH_NESTING = 8;

/**
 * Decodes a MessagePack write body into one ColumnBatch per columnar map (in body order), then
 * one per measurement of the row-form maps. Throws AppError invalid, naming the column or field.
 */
export function parseMsgpackWrite(bytes: Uint8Array, opts: MsgpackWriteOptions): ColumnBatch[] {
  if (!Number.isFinite(opts.now)) throw invalid('cannot decode MessagePack write: now must be a finite number of microseconds');
  if (bytes.length === 0) throw invalid('cannot decode MessagePack write: the body is empty');
  const r = new MsgpackReader(bytes);
  const parser = new WriteParser(opts.now);
  parser.item(r, 0);
  if (r.pos !== r.end) throw invalid(`cannot decode MessagePack write: ${r.end - r.pos} unexpected bytes after the payload`);
  return [...parser.columnar, ...parser.rows.finish()];
}

class WriteParser {
  readonly columnar: ColumnBatch[] = [];
  readonly rows: RowGroups;

  constructor(private readonly now: number) {
    this.rows = new RowGroups(now);
  }

  /** A map, or an array of maps. */
  item(r: MsgpackReader, depth: number): void {
    if (depth > MAX_BATCH_NESTING) throw invalid('cannot decode MessagePack write: batches nested too deeply');
    const kind = r.kindAt();
    if (kind === T_ARRAY) {
      const n = r.readArrayHeader();
      for (let i = 0; i < n; i++) {
        if (r.kindAt() !== T_MAP) throw invalid(`cannot decode MessagePack write: item ${i} of the array is ${describe(r, r.kindAt())}, expected a map`);
        this.map(r, depth + 1);
      }
    } else if (kind === T_MAP) {
      this.map(r, depth);
    } else {
      throw invalid(`cannot decode MessagePack write: expected a map or an array of maps, found ${describe(r, kind)}`);
    }
  }

  private map(r: MsgpackReader, depth: number): void {
    const n = r.readMapHeader();
    let m: string | null = null;
    let decoded: ReturnType<typeof decodeColumns> | null = null;
    let hasBatch = false;
    const parts: RowParts = { t: -1, tags: -1, fields: -1 };
    for (let i = 0; i < n; i++) {
      if (r.kindAt() !== T_STRING) throw invalid(`cannot decode MessagePack write: map keys must be strings, found ${TYPE_WORDS[r.kindAt()]}`);
      const key = r.readString();
      if (key === 'm' || key === 'measurement') {
        if (r.kindAt() !== T_STRING) throw invalid(`cannot decode MessagePack write: '${key}' must be a string, found ${TYPE_WORDS[r.kindAt()]}`);
        m = r.readString();
      } else if (key === 'columns') {
        decoded = decodeColumns(r, this.now);
      } else if (key === 'batch') {
        if (r.kindAt() !== T_ARRAY) throw invalid(`cannot decode MessagePack write: 'batch' must be an array, found ${TYPE_WORDS[r.kindAt()]}`);
        this.item(r, depth + 1);
        hasBatch = true;
      } else if (key === 't' || key === 'time' || key === 'tags' || key === 'fields') {
        // Row parts are read once the measurement is known, which may come later in the map.
        parts[key === 'time' ? 't' : key] = r.pos;
        r.skip();
      } else {
        r.skip(); // unknown keys are ignored, for clients that send extra metadata
      }
    }
    if (decoded !== null) {
      if (parts.fields >= 0 || parts.tags >= 0) throw invalid("cannot decode MessagePack write: a map has both 'columns' and row 'fields'/'tags'");
      const name = requireMeasurement(m);
      if (decoded.length > 0) this.columnar.push({ measurement: name, ...decoded });
    } else if (parts.fields >= 0) {
      this.rows.add(r, requireMeasurement(m), parts);
    } else if (!hasBatch) {
      throw invalid("cannot decode MessagePack write: a map needs 'columns' (columnar form), 'fields' (row form) or 'batch'");
    }
  }
}

/** Type of the value at the cursor for an error message; msgpackr's record extension gets a hint, as `new Packr()` writes it by default. */
function describe(r: MsgpackReader, kind: number): string {
  const b = r.buf[r.pos];
  // fixext1..16 carry the type right after the marker; ext8/16/32 after a 1-, 2- or 4-byte length.
  const typeOffset = b >= 0xd4 && b <= 0xd8 ? 1 : b >= 0xc7 && b <= 0xc9 ? [2, 3, 5][b - 0xc7] : -1;
  if (kind === T_EXT && typeOffset > 0 && r.buf[r.pos + typeOffset] === 0x72) return 'a msgpackr record (encode with useRecords: false; records are not standard MessagePack)';
  return TYPE_WORDS[kind];
}

function requireMeasurement(m: string | null): string {
  if (m === null) throw invalid("cannot decode MessagePack write: the measurement name 'm' is missing");
  const problem = measurementNameProblem(m);
  if (problem !== null) throw invalid(`cannot decode MessagePack write: ${problem}`);
  return m;
}
