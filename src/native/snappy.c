/*
 * Snappy block decompression for remote-write bodies (loaded by src/native/snappy.ts; the TypeScript
 * twin is `inflate` in src/ingest/prom/snappy.ts, compared on fuzzed and corrupt input by
 * tests/native-snappy.test.ts). Every length and offset is checked as the twin checks it, in the same
 * order, so both refuse the same bodies with the same reason. Freestanding (no headers): Bun's
 * TinyCC compiles it at start.
 */
typedef unsigned long long idx_t;
extern void *memcpy(void *dest, const void *src, unsigned long n);

/* Reasons, negated as return values (see snappy.ts). */
#define TRUNCATED_LITERAL_LENGTH 1
#define LITERAL_PAST_INPUT 2
#define OUTPUT_TOO_LONG 3
#define TRUNCATED_COPY 4
#define COPY_BEFORE_START 5
#define OUTPUT_TOO_SHORT 6

/* Decodes the elements of src[pos, n) into out[0, len); 0, or minus the reason it cannot. */
long long svc_snappy_inflate(const unsigned char *src, idx_t n, idx_t pos, unsigned char *out, idx_t len) {
  idx_t op = 0;
  while (pos < n) {
    unsigned int c = src[pos++];
    unsigned int kind = c & 3;
    idx_t l, offset;
    if (kind == 0) {
      l = (c >> 2) + 1;
      if (l > 60) {
        idx_t extra = l - 60;
        if (pos + extra > n) return -TRUNCATED_LITERAL_LENGTH;
        l = 0;
        for (idx_t i = extra; i > 0; i--) l = l * 256 + src[pos + i - 1];
        l += 1;
        pos += extra;
      }
      if (pos + l > n) return -LITERAL_PAST_INPUT;
      if (op + l > len) return -OUTPUT_TOO_LONG;
      memcpy(out + op, src + pos, l);
      pos += l;
      op += l;
      continue;
    }
    if (kind == 1) {
      if (pos >= n) return -TRUNCATED_COPY;
      l = ((c >> 2) & 7) + 4;
      offset = ((idx_t)(c >> 5) << 8) | src[pos++];
    } else if (kind == 2) {
      if (pos + 2 > n) return -TRUNCATED_COPY;
      l = (c >> 2) + 1;
      offset = (idx_t)src[pos] | ((idx_t)src[pos + 1] << 8);
      pos += 2;
    } else {
      if (pos + 4 > n) return -TRUNCATED_COPY;
      l = (c >> 2) + 1;
      offset = (idx_t)src[pos] | ((idx_t)src[pos + 1] << 8) | ((idx_t)src[pos + 2] << 16) | ((idx_t)src[pos + 3] << 24);
      pos += 4;
    }
    if (offset == 0 || offset > op) return -COPY_BEFORE_START;
    if (op + l > len) return -OUTPUT_TOO_LONG;
    unsigned char *d = out + op;
    const unsigned char *s = d - offset;
    if (offset >= 8 && op + l + 8 <= len) {
      /* Eight bytes at a time, each read before it is overwritten (offset >= 8); may write up to 7
         bytes past the copy, which later elements overwrite (the room is checked). */
      for (idx_t i = 0; i < l; i += 8) *(unsigned long long *)(d + i) = *(const unsigned long long *)(s + i);
    } else
      for (idx_t i = 0; i < l; i++) d[i] = s[i];
    op += l;
  }
  return op == len ? 0 : -OUTPUT_TOO_SHORT;
}
