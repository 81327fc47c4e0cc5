/**
 * Worker that writes JSON rows for a slice of a result (see json-workers.ts). It receives copies of
 * the raw column memory, long strings already resolved, and answers with the encoded bytes.
 */
import { ByteSink } from './byte-sink.ts';
import type { ColumnKind } from './column-kind.ts';
import type { LongStrings } from '../../duckdb/index.ts';
import { JsonRows } from './json-rows.ts';

/** A job: chunks of raw columns, with the long strings of VARCHAR and rendered columns. */
export interface JsonJob {
  id: number;
  kinds: ColumnKind[];
  first: boolean;
  chunks: { n: number; cols: { data: Uint8Array; validity: Uint8Array | null; strings: LongStrings | null }[] }[];
}

/** The answer: encoded parts, or the error message. */
export type JsonJobResult = { id: number; parts: Uint8Array[] } | { id: number; error: string };

declare const self: Worker;

self.onmessage = (event: MessageEvent<JsonJob>) => {
  const job = event.data;
  try {
    const rows = new JsonRows(job.kinds);
    const sink = new ByteSink();
    let first = job.first;
    for (const chunk of job.chunks) {
      const cols = chunk.cols.map((c) => ({ raw: { rows: chunk.n, data: c.data, validity: c.validity }, strings: c.strings ?? undefined }));
      rows.write(sink, cols, 0, chunk.n, first);
      first = false;
    }
    const parts = sink.parts();
    self.postMessage({ id: job.id, parts } satisfies JsonJobResult, parts.map((p) => p.buffer as ArrayBuffer));
  } catch (err) {
    self.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) } satisfies JsonJobResult);
  }
};
