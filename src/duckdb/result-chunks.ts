/**
 * Chunks of a materialized query result for the encoders, read in place.
 *
 * Through @duckdb/node-api, every chunk is a JS object whose memory DuckDB frees only when the
 * garbage collector runs its finalizer, and every vector read is a copy: for a 1M-row, 8-column
 * result that is 49 ms of chunk fetching and 28 ms of copying. Here a few lines of C, compiled at
 * start by Bun's built-in TinyCC (bun:ffi `cc`) and calling the DuckDB library the addon already
 * loaded, fetch each chunk and report where its vectors live: the encoders read DuckDB's memory
 * through views, and each chunk is freed as soon as its reader releases it, so the next one reuses
 * the same warm memory (8 ms for the same result). The C is src/native/duckdb-chunks.c and
 * strings.c.
 *
 * Nested and exotic values still need node-api's converters: `node` fetches the same chunk
 * through node-api on demand. Where the C path cannot be set up (no TinyCC, DuckDB not loaded as
 * libduckdb.so, `query.native_encoders = false`) or a result does not look as expected, chunks come
 * from node-api and vectors are copies; results are identical either way.
 *
 * Safety: a view of a chunk's memory is detached when the chunk is released (a late read sees an
 * empty array, never freed memory); node-api keeps its duckdb_result in a field it does not
 * document, so the handle found there is checked (a node-api external whose column and chunk counts
 * are the result's) before any chunk is read through it, and a mismatch falls back to node-api.
 */
import bindings from '@duckdb/node-bindings';
import { toArrayBuffer } from 'bun:ffi';
import type { DuckDBDataChunk, DuckDBMaterializedResult } from '@duckdb/node-api';
import { C_SOURCES, compileC, nativeFailed, nativeOnce, nativeStrings, type NativeStrings } from '../native/index.ts';
import { copyStrings, stringTotal, type RawVector } from './raw-vector.ts';

/** One chunk of a result. Vectors are valid until `release` (or the end of the result). */
export interface ResultChunk {
  readonly rowCount: number;
  /** Column `ci`, whose values are `width` bytes each (16 for strings), in DuckDB's layout. */
  vector(ci: number, width: number): RawVector;
  /** Column `ci`'s validity bitmap (see RawVector), or null when every row is valid. */
  validity(ci: number): Uint8Array | null;
  /** Copies column `ci`'s values (rowCount * width bytes) into `dest` at byte `at`. */
  copyValues(ci: number, width: number, dest: Uint8Array, at: number): void;
  /** Bytes of column `ci`'s valid strings (VARCHAR/BLOB), for sizing `copyStrings`' target. */
  stringTotal(ci: number): number;
  /**
   * Appends column `ci`'s strings in Arrow's layout: `offsets[at + 1 + i]` is the end of row i
   * counted from `base`, the bytes go to `data` from `base` (nulls are empty); returns the new end.
   * `data` must have STRING_SLACK bytes past the last string's end.
   */
  copyStrings(ci: number, offsets: Int32Array, at: number, base: number, data: Uint8Array): number;
  /** The same chunk as a node-api object, for its value converters (fetched on first use). */
  readonly node: DuckDBDataChunk;
  /**
   * For C readers: the row count, then per column the addresses of its data and validity (0: all
   * valid), valid until `release`; null when the chunk came through node-api.
   */
  readonly addresses: Float64Array | null;
  /** Frees the chunk's memory now; its vectors must not be read afterwards. */
  release(): void;
}

/** Bytes a `copyStrings` target needs past its last string (the native copy moves short strings whole). */
export const STRING_SLACK = 12;

/** The chunks of one materialized result, in order. */
export interface ResultChunks {
  readonly count: number;
  /** Chunk `index` (each index once). */
  chunk(index: number): ResultChunk;
  /** Releases every chunk still held: call once the result has been read. */
  close(): void;
}

/** Reads `result`, whose rows have `columns` columns, in place when the C reader is available. */
export function resultChunks(result: DuckDBMaterializedResult, columns: number): ResultChunks {
  const reader = nativeReader();
  if (reader) {
    const handle = resultHandle(reader, result, columns);
    if (handle !== 0) return new NativeChunks(reader, handle, result, columns);
  }
  return new NodeChunks(result);
}

/**
 * The duckdb_result behind `result`, or 0 (logged once) when node-api no longer keeps it where this
 * reads it: its private `result` field holding a node-api external.
 */
function resultHandle(reader: NativeReader, result: DuckDBMaterializedResult, columns: number): number {
  const field = (result as unknown as { result?: unknown }).result;
  const handle = typeof field === 'object' && field !== null ? reader.external(field) : 0;
  if (handle !== 0 && reader.columnCount(handle) === columns && reader.chunkCount(handle) === result.chunkCount) return handle;
  nativeFailed('result reader', new Error('@duckdb/node-api no longer keeps its duckdb_result where expected'));
  return 0;
}

/** Whether results are read in place (for startup logs and tests). */
export function nativeResultsEnabled(): boolean {
  return nativeReader() !== null;
}

interface NativeReader extends NativeStrings {
  external(value: unknown): number;
  columnCount(result: number): number;
  chunkCount(result: number): number;
  chunk(result: number, index: number, columns: number, out: Float64Array): number | null;
  destroy(chunk: number): void;
}

/** The C reader; any failure (no compiler, another platform) leaves the node-api path, which gives the same results. */
const nativeReader = nativeOnce('result reader', loadNativeReader);

/** Compiles the C side and binds it to the DuckDB library the addon loaded. */
function loadNativeReader(): NativeReader | null {
  if (process.platform !== 'linux') return null;
  // node-api loads the addon (and with it the library) when first imported.
  void bindings;
  const d = compileC('duckdb-chunks', C_SOURCES['duckdb-chunks'], {
    svc_init: { args: ['ptr'], returns: 'i32' },
    svc_external: { args: ['napi_env', 'napi_value'], returns: 'ptr' },
    svc_column_count: { args: ['ptr'], returns: 'u64' },
    svc_chunk_count: { args: ['ptr'], returns: 'u64' },
    svc_chunk: { args: ['ptr', 'u64', 'u64', 'ptr'], returns: 'ptr' },
    svc_destroy: { args: ['ptr'], returns: 'void' },
  });
  const strings = nativeStrings();
  if (!strings) throw new Error('the string copier did not load');
  // By soname, among the libraries already loaded: the very copy the addon uses.
  if (d.svc_init(Buffer.from('libduckdb.so\0')) !== 1) throw new Error('libduckdb.so is not loaded in this process (DuckDB linked another way)');
  // The napi_env slot is filled by Bun; JavaScript still passes a placeholder for it.
  const external = d.svc_external as unknown as (env: null, value: unknown) => number | null;
  return {
    ...strings,
    external: (value) => external(null, value) ?? 0,
    columnCount: (result) => Number(d.svc_column_count(result as never)),
    chunkCount: (result) => Number(d.svc_chunk_count(result as never)),
    chunk: (result, index, columns, out) => d.svc_chunk(result as never, index, columns, out) as number | null,
    destroy: (chunk) => d.svc_destroy(chunk as never),
  };
}

/** Chunks fetched by the C reader; each freed on release, the rest on close. */
class NativeChunks implements ResultChunks {
  readonly count: number;
  private readonly open = new Set<NativeChunk>();

  constructor(
    private readonly reader: NativeReader,
    private readonly handle: number,
    private readonly result: DuckDBMaterializedResult,
    private readonly columns: number,
  ) {
    this.count = result.chunkCount;
  }

  chunk(index: number): ResultChunk {
    const out = new Float64Array(1 + 2 * this.columns);
    const ptr = this.reader.chunk(this.handle, index, this.columns, out);
    if (!ptr) throw new Error(`cannot fetch chunk ${index} of a DuckDB result`);
    const chunk = new NativeChunk(this, this.reader, ptr, out, () => this.result.getChunk(index));
    this.open.add(chunk);
    return chunk;
  }

  free(chunk: NativeChunk, ptr: number): void {
    this.open.delete(chunk);
    this.reader.destroy(ptr);
  }

  close(): void {
    for (const c of [...this.open]) c.release();
  }
}

class NativeChunk implements ResultChunk {
  readonly rowCount: number;
  private nodeChunk: DuckDBDataChunk | null = null;
  /** Views of this chunk's memory handed out, detached on release. */
  private readonly views: ArrayBuffer[] = [];

  constructor(
    private readonly owner: NativeChunks,
    private readonly reader: NativeReader,
    private ptr: number,
    readonly addresses: Float64Array,
    private readonly fetchNode: () => DuckDBDataChunk,
  ) {
    this.rowCount = addresses[0]!;
  }

  vector(ci: number, width: number): RawVector {
    const rows = this.rowCount;
    const data = rows === 0 ? new Uint8Array(0) : this.view(this.data(ci), rows * width);
    return { rows, data, validity: this.validity(ci) };
  }

  validity(ci: number): Uint8Array | null {
    const at = this.addresses[2 + 2 * ci]!;
    if (at === 0 || this.rowCount === 0) return null;
    this.data(ci);
    return this.view(at, Math.ceil(this.rowCount / 64) * 8);
  }

  private view(at: number, bytes: number): Uint8Array {
    const buffer = toArrayBuffer(at as never, 0, bytes);
    this.views.push(buffer);
    return new Uint8Array(buffer);
  }

  copyValues(ci: number, width: number, dest: Uint8Array, at: number): void {
    if (this.rowCount > 0) this.reader.copy(dest, at, this.data(ci), this.rowCount * width);
  }

  stringTotal(ci: number): number {
    return this.rowCount === 0 ? 0 : this.reader.stringTotal(this.data(ci), this.addresses[2 + 2 * ci]!, this.rowCount);
  }

  copyStrings(ci: number, offsets: Int32Array, at: number, base: number, data: Uint8Array): number {
    return this.rowCount === 0 ? base : this.reader.strings(this.data(ci), this.addresses[2 + 2 * ci]!, this.rowCount, offsets, at, base, data);
  }

  private data(ci: number): number {
    if (this.ptr === 0) throw new Error('chunk read after release');
    return this.addresses[1 + 2 * ci]!;
  }

  get node(): DuckDBDataChunk {
    return (this.nodeChunk ??= this.fetchNode());
  }

  release(): void {
    if (this.ptr === 0) return;
    const ptr = this.ptr;
    this.ptr = 0;
    // Detaching (transfer to an empty buffer, no copy) leaves every view of the chunk empty before DuckDB frees it.
    for (const v of this.views) v.transfer(0);
    this.views.length = 0;
    this.owner.free(this, ptr);
  }
}

/** Chunks through node-api: vectors are copies, memory goes with the garbage collector. */
class NodeChunks implements ResultChunks {
  readonly count: number;

  constructor(private readonly result: DuckDBMaterializedResult) {
    this.count = result.chunkCount;
  }

  chunk(index: number): ResultChunk {
    const node = this.result.getChunk(index);
    const vector = (ci: number, width: number) => copiedVector(node, ci, width);
    return {
      rowCount: node.rowCount,
      node,
      addresses: null,
      vector,
      validity: (ci) => vector(ci, 0).validity,
      copyValues: (ci, width, dest, at) => dest.set(vector(ci, width).data, at),
      stringTotal: (ci) => stringTotal(vector(ci, 16)),
      copyStrings: (ci, offsets, at, base, data) => copyStrings(vector(ci, 16), offsets, at, base, data),
      release: () => undefined,
    };
  }

  close(): void {}
}

function copiedVector(chunk: DuckDBDataChunk, column: number, width: number): RawVector {
  const rows = chunk.rowCount;
  const vector = bindings.data_chunk_get_vector(chunk.chunk, column);
  const data = rows === 0 ? new Uint8Array(0) : bindings.vector_get_data(vector, rows * width);
  const validity = rows === 0 ? null : (bindings.vector_get_validity(vector, Math.ceil(rows / 64) * 8) ?? null);
  return { rows, data, validity };
}
