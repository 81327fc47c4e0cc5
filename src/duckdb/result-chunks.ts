/**
 * Chunks of a materialized query result for the encoders, read in place.
 *
 * Through @duckdb/node-api, every chunk is a JS object whose memory DuckDB frees only when the
 * garbage collector runs its finalizer, and every vector read is a copy: for a 1M-row, 8-column
 * result that is 49 ms of chunk fetching and 28 ms of copying. Here a few lines of C, compiled at
 * start by Bun's built-in TinyCC (bun:ffi `cc`) and calling the DuckDB library the addon already
 * loaded, fetch each chunk and report where its vectors live: the encoders read DuckDB's memory
 * through views, and each chunk is freed as soon as its reader releases it, so the next one reuses
 * the same warm memory (8 ms for the same result).
 *
 * Nested and exotic values still need node-api's converters: `node` fetches the same chunk
 * through node-api on demand. Where the C path cannot be set up (no TinyCC, a platform without
 * /proc/self/maps, SVC_NATIVE_RESULTS=0), every chunk comes from node-api and vectors are copies;
 * results are identical either way.
 */
import bindings from '@duckdb/node-bindings';
import { toArrayBuffer } from 'bun:ffi';
import { readFileSync } from 'node:fs';
import type { DuckDBDataChunk, DuckDBMaterializedResult } from '@duckdb/node-api';
import { compileC, nativeOnce } from '../lib/tinycc.ts';
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
  return reader ? new NativeChunks(reader, result, columns) : new NodeChunks(result);
}

/** Whether results are read in place (for startup logs and tests). */
export function nativeResultsEnabled(): boolean {
  return nativeReader() !== null;
}

/** The C side: one call fetches a chunk and writes its row count and vector addresses into `out`. */
const SOURCE = `
typedef unsigned long long idx_t;
/* duckdb_result as declared in duckdb.h: passed by value to the chunk functions. */
typedef struct { idx_t column_count, row_count, rows_changed; void *columns; char *error; void *internal_data; } duckdb_result;
typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
extern int napi_get_value_external(napi_env env, napi_value value, void **result);

extern void *dlopen(const char *file, int mode);
extern void *dlsym(void *handle, const char *name);

static idx_t (*chunk_count)(duckdb_result);
static void *(*get_chunk)(duckdb_result, idx_t);
static void (*destroy_chunk)(void **);
static idx_t (*chunk_size)(void *);
static void *(*chunk_vector)(void *, idx_t);
static void *(*vector_data)(void *);
static void *(*vector_validity)(void *);

/* Binds to the library at path only if this process has it loaded already (RTLD_NOW | RTLD_NOLOAD):
   the very copy the addon uses, with its allocator. */
int svc_init(const char *path) {
  void *h = dlopen(path, 2 | 4);
  if (!h) return 0;
  chunk_count = dlsym(h, "duckdb_result_chunk_count");
  get_chunk = dlsym(h, "duckdb_result_get_chunk");
  destroy_chunk = dlsym(h, "duckdb_destroy_data_chunk");
  chunk_size = dlsym(h, "duckdb_data_chunk_get_size");
  chunk_vector = dlsym(h, "duckdb_data_chunk_get_vector");
  vector_data = dlsym(h, "duckdb_vector_get_data");
  vector_validity = dlsym(h, "duckdb_vector_get_validity");
  return chunk_count && get_chunk && destroy_chunk && chunk_size && chunk_vector && vector_data && vector_validity;
}

/* The pointer inside a node-bindings external (its duckdb_result, data chunk, ...). */
void *svc_external(napi_env env, napi_value value) {
  void *p = 0;
  return napi_get_value_external(env, value, &p) == 0 ? p : 0;
}

idx_t svc_chunk_count(duckdb_result *r) { return chunk_count(*r); }

/* Chunk index of r; out gets its rows, then per column the data and validity addresses (doubles: addresses stay below 2^53). */
void *svc_chunk(duckdb_result *r, idx_t index, idx_t columns, double *out) {
  void *chunk = get_chunk(*r, index);
  if (!chunk) return 0;
  out[0] = (double)chunk_size(chunk);
  for (idx_t i = 0; i < columns; i++) {
    void *v = chunk_vector(chunk, i);
    out[1 + 2 * i] = (double)(idx_t)vector_data(v);
    out[2 + 2 * i] = (double)(idx_t)vector_validity(v);
  }
  return chunk;
}

void svc_destroy(void *chunk) { destroy_chunk(&chunk); }

extern void *memcpy(void *dest, const void *src, unsigned long n);

void svc_copy(unsigned char *dest, idx_t at, const unsigned char *src, idx_t n) { memcpy(dest + at, src, n); }

#define VALID(v, i) (!(v) || (((v)[(i) >> 6] >> ((i) & 63)) & 1))

/* Bytes of the valid strings among rows 16-byte string headers. */
idx_t svc_string_total(const unsigned char *headers, const unsigned long long *validity, idx_t rows) {
  idx_t total = 0;
  for (idx_t i = 0; i < rows; i++)
    if (VALID(validity, i)) total += *(const unsigned int *)(headers + i * 16);
  return total;
}

/* Arrow layout: offsets[at + 1 + i] = end of row i from base; bytes into data + base (which has 12
   bytes to spare past the last string: short strings are copied as one 8-byte and one 4-byte move).
   Returns the new end. */
idx_t svc_strings(const unsigned char *headers, const unsigned long long *validity, idx_t rows, int *offsets, idx_t at, idx_t base, unsigned char *data) {
  int *o = offsets + at + 1;
  for (idx_t i = 0; i < rows; i++) {
    const unsigned char *h = headers + i * 16;
    unsigned int len = *(const unsigned int *)h;
    if (validity && !((validity[i >> 6] >> (i & 63)) & 1)) len = 0;
    else if (len <= 12) {
      *(unsigned long long *)(data + base) = *(const unsigned long long *)(h + 4);
      *(unsigned int *)(data + base + 8) = *(const unsigned int *)(h + 12);
    } else memcpy(data + base, *(const unsigned char *const *)(h + 8), len);
    base += len;
    o[i] = (int)base;
  }
  return base;
}
`;

interface NativeReader {
  external(value: unknown): number;
  chunkCount(result: number): number;
  chunk(result: number, index: number, columns: number, out: Float64Array): number | null;
  destroy(chunk: number): void;
  copy(dest: Uint8Array, at: number, src: number, n: number): void;
  stringTotal(headers: number, validity: number, rows: number): number;
  strings(headers: number, validity: number, rows: number, offsets: Int32Array, at: number, base: number, data: Uint8Array): number;
}

/** The C reader; any failure (no compiler, another platform) leaves the node-api path, which gives the same results. */
const nativeReader = nativeOnce(loadNativeReader);

/** Compiles the C side and binds it to the DuckDB library the addon mapped (found in /proc/self/maps). */
function loadNativeReader(): NativeReader | null {
  const path = loadedDuckdbLibrary();
  if (!path) return null;
  const s = compileC('result-chunks', SOURCE, {
    svc_init: { args: ['ptr'], returns: 'i32' },
    svc_external: { args: ['napi_env', 'napi_value'], returns: 'ptr' },
    svc_chunk_count: { args: ['ptr'], returns: 'u64' },
    svc_chunk: { args: ['ptr', 'u64', 'u64', 'ptr'], returns: 'ptr' },
    svc_destroy: { args: ['ptr'], returns: 'void' },
    svc_copy: { args: ['ptr', 'u64', 'ptr', 'u64'], returns: 'void' },
    svc_string_total: { args: ['ptr', 'ptr', 'u64'], returns: 'u64' },
    svc_strings: { args: ['ptr', 'ptr', 'u64', 'ptr', 'u64', 'u64', 'ptr'], returns: 'u64' },
  });
  if (s.svc_init(Buffer.from(`${path}\0`)) !== 1) return null;
  // The napi_env slot is filled by Bun; JavaScript still passes a placeholder for it.
  const external = s.svc_external as unknown as (env: null, value: unknown) => number | null;
  return {
    external: (value) => external(null, value) ?? 0,
    chunkCount: (result) => Number(s.svc_chunk_count(result as never)),
    chunk: (result, index, columns, out) => s.svc_chunk(result as never, index, columns, out) as number | null,
    destroy: (chunk) => s.svc_destroy(chunk as never),
    copy: (dest, at, src, n) => s.svc_copy(dest, at, src as never, n),
    stringTotal: (headers, validity, rows) => Number(s.svc_string_total(headers as never, validity as never, rows)),
    strings: (headers, validity, rows, offsets, at, base, data) => Number(s.svc_strings(headers as never, validity as never, rows, offsets, at, base, data)),
  };
}

/** Path of the DuckDB shared library mapped into this process, or null (not Linux, statically linked). */
function loadedDuckdbLibrary(): string | null {
  if (process.platform !== 'linux') return null;
  // node-api loads the addon (and with it the library) when first imported.
  void bindings;
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const at = line.indexOf('/');
    if (at > 0 && line.endsWith('/libduckdb.so')) return line.slice(at);
  }
  return null;
}

/** Chunks fetched by the C reader; each freed on release, the rest on close. */
class NativeChunks implements ResultChunks {
  readonly count: number;
  private readonly handle: number;
  private readonly open = new Set<NativeChunk>();

  constructor(
    private readonly reader: NativeReader,
    private readonly result: DuckDBMaterializedResult,
    private readonly columns: number,
  ) {
    this.handle = reader.external((result as unknown as { result: unknown }).result);
    this.count = result.chunkCount;
    // A node-api whose result object no longer holds a duckdb_result would read garbage: refuse it.
    if (this.handle === 0 || reader.chunkCount(this.handle) !== this.count) throw new Error('cannot read a DuckDB result in place: unexpected result handle');
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
    const data = rows === 0 ? new Uint8Array(0) : new Uint8Array(toArrayBuffer(this.data(ci) as never, 0, rows * width));
    return { rows, data, validity: this.validity(ci) };
  }

  validity(ci: number): Uint8Array | null {
    const at = this.addresses[2 + 2 * ci]!;
    return at === 0 || this.rowCount === 0 ? null : new Uint8Array(toArrayBuffer(at as never, 0, Math.ceil(this.rowCount / 64) * 8));
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
