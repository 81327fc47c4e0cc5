/*
 * Result chunks fetched straight from the DuckDB library the node-api addon loaded (see
 * src/duckdb/result-chunks.ts): one call fetches a chunk and reports where its vectors live.
 * Freestanding on purpose (no headers): Bun's TinyCC compiles it at start.
 */
typedef unsigned long long idx_t;
/* duckdb_result as declared in duckdb.h: passed by value to the chunk functions. */
typedef struct { idx_t column_count, row_count, rows_changed; void *columns; char *error; void *internal_data; } duckdb_result;
typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
extern int napi_get_value_external(napi_env env, napi_value value, void **result);
/* napi_valuetype's napi_external. */
#define NAPI_EXTERNAL 8
extern int napi_typeof(napi_env env, napi_value value, int *result);

extern void *dlopen(const char *file, int mode);
extern void *dlsym(void *handle, const char *name);

static idx_t (*column_count)(duckdb_result *);
static idx_t (*chunk_count)(duckdb_result);
static void *(*get_chunk)(duckdb_result, idx_t);
static void (*destroy_chunk)(void **);
static idx_t (*chunk_size)(void *);
static idx_t (*chunk_column_count)(void *);
static void *(*chunk_vector)(void *, idx_t);
static void *(*vector_data)(void *);
static void *(*vector_validity)(void *);

/* Binds to the library named name only if this process has it loaded already (RTLD_NOW |
   RTLD_NOLOAD): the very copy the addon uses, with its allocator. The loader matches the name
   against each loaded library's soname, so no path (and no /proc/self/maps) is needed. */
int svc_init(const char *name) {
  void *h = dlopen(name, 2 | 4);
  if (!h) return 0;
  column_count = dlsym(h, "duckdb_column_count");
  chunk_count = dlsym(h, "duckdb_result_chunk_count");
  get_chunk = dlsym(h, "duckdb_result_get_chunk");
  destroy_chunk = dlsym(h, "duckdb_destroy_data_chunk");
  chunk_size = dlsym(h, "duckdb_data_chunk_get_size");
  chunk_column_count = dlsym(h, "duckdb_data_chunk_get_column_count");
  chunk_vector = dlsym(h, "duckdb_data_chunk_get_vector");
  vector_data = dlsym(h, "duckdb_vector_get_data");
  vector_validity = dlsym(h, "duckdb_vector_get_validity");
  return column_count && chunk_count && get_chunk && destroy_chunk && chunk_size && chunk_column_count && chunk_vector && vector_data && vector_validity;
}

/* The pointer inside a node-bindings external (its duckdb_result), or 0 when value is no external. */
void *svc_external(napi_env env, napi_value value) {
  void *p = 0;
  int type = -1;
  if (napi_typeof(env, value, &type) != 0 || type != NAPI_EXTERNAL) return 0;
  return napi_get_value_external(env, value, &p) == 0 ? p : 0;
}

idx_t svc_chunk_count(duckdb_result *r) { return chunk_count(*r); }

idx_t svc_column_count(duckdb_result *r) { return column_count(r); }

/* Chunk index of r; out gets its rows, then per column the data and validity addresses (doubles:
   addresses stay below 2^53). 0 when the chunk is missing or has another column count. */
void *svc_chunk(duckdb_result *r, idx_t index, idx_t columns, double *out) {
  void *chunk = get_chunk(*r, index);
  if (!chunk) return 0;
  if (chunk_column_count(chunk) != columns) { destroy_chunk(&chunk); return 0; }
  out[0] = (double)chunk_size(chunk);
  for (idx_t i = 0; i < columns; i++) {
    void *v = chunk_vector(chunk, i);
    out[1 + 2 * i] = (double)(idx_t)vector_data(v);
    out[2 + 2 * i] = (double)(idx_t)vector_validity(v);
  }
  return chunk;
}

void svc_destroy(void *chunk) { destroy_chunk(&chunk); }
