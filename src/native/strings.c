/*
 * String and value copies out of DuckDB's vectors for the Arrow and MessagePack encoders (loaded by
 * src/duckdb/result-chunks.ts; the TypeScript twins are stringTotal and copyStrings in
 * src/duckdb/raw-vector.ts, compared byte for byte by tests/native-twins.test.ts).
 * Freestanding on purpose (no headers): Bun's TinyCC compiles it at start.
 */
typedef unsigned long long idx_t;
extern void *memcpy(void *dest, const void *src, unsigned long n);

void svc_copy(unsigned char *dest, idx_t at, const unsigned char *src, idx_t n) { memcpy(dest + at, src, n); }

/* Whether row i is valid (v null: every row is). Checked before a string header is read: under a
   NULL, DuckDB leaves the header as the memory was, and its length and pointer are garbage. */
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
    unsigned int len = 0;
    if (VALID(validity, i)) {
      len = *(const unsigned int *)h;
      if (len <= 12) {
        *(unsigned long long *)(data + base) = *(const unsigned long long *)(h + 4);
        *(unsigned int *)(data + base + 8) = *(const unsigned int *)(h + 12);
      } else memcpy(data + base, *(const unsigned char *const *)(h + 8), len);
    }
    base += len;
    o[i] = (int)base;
  }
  return base;
}
