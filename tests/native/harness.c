/*
 * The native encoders compiled by gcc/clang with -fsanitize=address,undefined and run over the fuzz
 * corpus of tests/helpers/native-corpus.ts (tests/native-twins.test.ts builds and runs it). It drives
 * the C exactly as src/query/encode/json-native.ts and src/duckdb/result-chunks.ts do: blocks that
 * start at 4 KiB and grow as the C side asks, each malloc'd at its exact size so a write past one is
 * caught. Usage: harness CORPUS OUT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/native/json-rows.c"
#include "../../src/native/strings.c"

static FILE *in, *out;

static u32 rd32(void) {
  u32 v;
  if (fread(&v, 4, 1, in) != 1) { fprintf(stderr, "harness: corpus ends early\n"); exit(2); }
  return v;
}

static u8 *rdbytes(u32 n) {
  u8 *b = malloc(n ? n : 1);
  if (n && fread(b, 1, n, in) != n) { fprintf(stderr, "harness: corpus ends early\n"); exit(2); }
  return b;
}

/* The growing output of one case, in blocks as ByteSink keeps them. */
static u8 *all;
static u64 all_len, all_cap;

static void keep(const u8 *b, u64 n) {
  if (n == 0) return;
  if (all_len + n > all_cap) { all_cap = (all_len + n) * 2; all = realloc(all, all_cap); }
  memcpy(all + all_len, b, n);
  all_len += n;
}

static void put64(u64 v) { fwrite(&v, 8, 1, out); }

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: harness CORPUS OUT\n"); return 2; }
  in = fopen(argv[1], "rb");
  out = fopen(argv[2], "wb");
  if (!in || !out) { perror("harness"); return 2; }
  svc_json_init();
  u32 cases = rd32();
  for (u32 c = 0; c < cases; c++) {
    u32 ncols = rd32(), nchunks = rd32();
    u32 *code = malloc(ncols * 4), *unit = malloc(ncols * 4), *width = malloc(ncols * 4);
    for (u32 k = 0; k < ncols; k++) { code[k] = rd32(); unit[k] = rd32(); width[k] = rd32(); }
    all_len = 0;
    u64 block = 4096, pos = 0;
    u8 *buf = malloc(block);
    /* Strings of every chunk, written after the JSON text. */
    u8 *strings_out = 0;
    u64 strings_len = 0;
    for (u32 ch = 0; ch < nchunks; ch++) {
      u32 rows = rd32();
      u32 heap_len = rd32();
      u8 *heap = rdbytes(heap_len);
      u8 **data = malloc(ncols * sizeof *data);
      u8 **valid = malloc(ncols * sizeof *valid);
      double *desc = malloc(ncols * 4 * sizeof *desc);
      for (u32 k = 0; k < ncols; k++) {
        u32 n = rd32();
        data[k] = rdbytes(n);
        u32 vn = rd32();
        valid[k] = vn ? rdbytes(vn) : 0;
        if (code[k] == 11 || code[k] == 12)
          for (u32 i = 0; i < rows; i++) {
            int ok = !valid[k] || ((valid[k][i >> 3] >> (i & 7)) & 1);
            u8 *h = data[k] + (u64)i * 16;
            if (ok && *(u32 *)h > 12) *(u8 **)(h + 8) = heap + *(u64 *)(h + 8);
          }
        desc[4 * k] = code[k];
        desc[4 * k + 1] = unit[k];
        desc[4 * k + 2] = (double)(u64)data[k];
        desc[4 * k + 3] = (double)(u64)valid[k];
      }
      double res[3];
      i64 row = 0;
      while (row < rows) {
        int first = ch == 0 && row == 0;
        i64 next = svc_json_rows(desc, ncols, row, rows, first, buf, (i64)pos, (i64)block, res);
        pos += (u64)res[0];
        if (res[1] == 0) break;
        if (res[1] == 1) {
          /* As ByteSink.reserve(max(need, free + 1)): keep the block, start one that fits. */
          u64 need = (u64)res[2], n = block - pos + 1;
          if (need > n) n = need;
          keep(buf, pos);
          free(buf);
          block = block * 2 < (1u << 20) ? block * 2 : (1u << 20);
          if (n > block) block = n;
          buf = malloc(block);
          pos = 0;
          row = next;
        } else {
          /* A row for the TypeScript writer: a placeholder the test puts in the same place. */
          keep(buf, pos);
          pos = 0;
          if (!(ch == 0 && next == 0)) keep((const u8 *)",", 1);
          keep((const u8 *)"H", 1);
          row = next + 1;
        }
      }
      for (u32 k = 0; k < ncols; k++) {
        if (code[k] != 11) continue;
        const u64 *v = (const u64 *)valid[k];
        u64 total = svc_string_total(data[k], v, rows);
        int *offsets = calloc(rows + 1, sizeof(int));
        u8 *bytes = malloc(total + 12);
        u64 end = svc_strings(data[k], v, rows, offsets, 0, 0, bytes);
        u64 add = 8 + 4 * (u64)(rows + 1) + total;
        strings_out = realloc(strings_out, strings_len + add);
        memcpy(strings_out + strings_len, &end, 8);
        memcpy(strings_out + strings_len + 8, offsets, 4 * (u64)(rows + 1));
        if (total) memcpy(strings_out + strings_len + 8 + 4 * (u64)(rows + 1), bytes, total);
        strings_len += add;
        free(offsets);
        free(bytes);
      }
      for (u32 k = 0; k < ncols; k++) { free(data[k]); free(valid[k]); }
      free(data); free(valid); free(desc); free(heap);
    }
    keep(buf, pos);
    free(buf);
    put64(all_len);
    fwrite(all, 1, all_len, out);
    put64(strings_len);
    fwrite(strings_out, 1, strings_len, out);
    free(strings_out);
    free(code); free(unit); free(width);
  }
  fclose(out);
  return 0;
}
