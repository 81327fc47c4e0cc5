/*
 * src/native/snappy.c compiled by gcc/clang with -fsanitize=address,undefined and run over the
 * streams of tests/native-snappy.test.ts (which builds and runs it). Every source and output is
 * malloc'd at its exact size, so a read or write one byte past either is caught.
 * Corpus: cases of [u32 source length][source][u32 output length]. Out: per case [i64 result][output].
 * Usage: snappy-harness CORPUS OUT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/native/snappy.c"

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  if (!in || !out) return 2;
  unsigned int n;
  while (fread(&n, 4, 1, in) == 1) {
    unsigned char *src = malloc(n ? n : 1);
    if (n && fread(src, 1, n, in) != n) return 2;
    unsigned int len;
    if (fread(&len, 4, 1, in) != 1) return 2;
    unsigned char *dst = malloc(len ? len : 1);
    memset(dst, 0, len);
    long long r = svc_snappy_inflate(src, n, 0, dst, len);
    fwrite(&r, 8, 1, out);
    fwrite(dst, 1, len, out);
    free(src);
    free(dst);
  }
  fclose(out);
  return 0;
}
