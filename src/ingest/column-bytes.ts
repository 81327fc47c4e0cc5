/**
 * About how much memory a batch holds, for the write buffers' byte bound (ingest.max_buffered_size).
 * It must cost next to nothing per batch on the ingest hot path, so it reads sizes that are already
 * known: typed arrays' `byteLength`, a dictionary's distinct strings (summed once per dictionary and
 * remembered), and for a plain string column the character count its ColumnBuilder kept while parsing
 * (`noteStringChars`). Only a plain string column built elsewhere (WAL replay, imports) is summed here.
 * Strings count one byte per UTF-16 unit plus a small header, arrays of strings a pointer per row: an
 * estimate that stays in proportion with the real size, including for one huge value.
 */
import type { ColumnBatch } from './column-batch.ts';

/** What an engine spends per distinct string besides its characters (header, hash, alignment). */
const STRING_OVERHEAD = 16;
/** One pointer per row in a plain array of strings. */
const POINTER_BYTES = 8;

const dictionaryBytes = new WeakMap<readonly (string | null)[], number>();
const plainChars = new WeakMap<readonly (string | null)[], number>();

/** Records the characters of the non-null values of a plain string column, counted while it was built. */
export function noteStringChars(values: readonly (string | null)[], chars: number): void {
  plainChars.set(values, chars);
}

/** Estimated bytes of `batch`'s columns (time included); see the module comment. */
export function batchBytes(batch: ColumnBatch): number {
  let bytes = batch.time.byteLength;
  for (const col of batch.columns.values()) {
    if (col.type !== 'string') bytes += col.values.byteLength + (col.valid?.byteLength ?? 0);
    else if (col.dict) bytes += col.dict.codes.byteLength + stringsBytes(col.dict.dictionary);
    else bytes += batch.length * POINTER_BYTES + (plainChars.get(col.values) ?? sumChars(col.values, batch.length));
  }
  return bytes;
}

/** The distinct strings of a dictionary, remembered: parsers share one dictionary between batches. */
function stringsBytes(dictionary: readonly (string | null)[]): number {
  let bytes = dictionaryBytes.get(dictionary);
  if (bytes === undefined) {
    bytes = sumChars(dictionary, dictionary.length) + dictionary.length * STRING_OVERHEAD;
    dictionaryBytes.set(dictionary, bytes);
  }
  return bytes;
}

function sumChars(values: readonly (string | null)[], length: number): number {
  let chars = 0;
  for (let i = 0; i < length; i++) chars += values[i]?.length ?? 0;
  return chars;
}
