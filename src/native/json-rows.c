/*
 * JSON rows written straight from DuckDB's vectors (see src/query/encode/json-native.ts, which loads
 * this file, and src/query/encode/json-rows.ts, its TypeScript twin: both must give the same bytes,
 * which tests/native-twins.test.ts checks on fuzzed chunks, also under AddressSanitizer).
 * Freestanding on purpose (no headers): Bun's TinyCC compiles it at start.
 */
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef unsigned char u8;
extern void *memcpy(void *dest, const void *src, unsigned long n);

enum { K_I8, K_I16, K_I32, K_U8, K_U16, K_U32, K_I64, K_U64, K_BOOL, K_TS, K_DATE, K_VARCHAR, K_JSON, K_NULL };
enum { DONE, FULL, HANDBACK };

static u8 pairs[200];
static const char hex[] = "0123456789abcdef";
static const i64 per_sec[4] = { 1, 1000, 1000000, 1000000000 };
static const int frac_digits[4] = { 0, 3, 6, 9 };

void svc_json_init(void) {
  for (int i = 0; i < 100; i++) { pairs[2 * i] = '0' + i / 10; pairs[2 * i + 1] = '0' + i % 10; }
}

/* TinyCC does not turn division by a constant into a multiplication, and a divide costs dozens of
   cycles: these are exact for every 32-bit v. */
#define DIV10(v) ((u32)(((u64)(v) * 0xCCCCCCCDull) >> 35))
#define DIV100(v) ((u32)(((u64)(v) * 1374389535ull) >> 37))

/* Two digits per step, from the end of tmp. */
static u8 *put_u32_rev(u8 *t, u32 w) {
  while (w >= 100) { u32 q = DIV100(w); u32 d = (w - q * 100) * 2; *--t = pairs[d + 1]; *--t = pairs[d]; w = q; }
  if (w >= 10) { *--t = pairs[w * 2 + 1]; *--t = pairs[w * 2]; } else *--t = '0' + w;
  return t;
}

static u8 *put_u64(u8 *p, u64 v) {
  u8 tmp[24];
  u8 *t = tmp + 24;
  while (v > 0xFFFFFFFFull) {
    u64 q = v / 100000000;
    u32 r = (u32)(v - q * 100000000);
    v = q;
    for (int k = 0; k < 4; k++) { u32 h = DIV100(r); u32 d = (r - h * 100) * 2; *--t = pairs[d + 1]; *--t = pairs[d]; r = h; }
  }
  t = put_u32_rev(t, (u32)v);
  while (t < tmp + 24) *p++ = *t++;
  return p;
}

static u8 *put_i64(u8 *p, i64 v) {
  if (v < 0) { *p++ = '-'; return put_u64(p, (u64)0 - (u64)v); }
  return put_u64(p, (u64)v);
}

static u8 *put_i32(u8 *p, int v) {
  u8 tmp[12];
  u8 *t;
  u32 u = (u32)v;
  if (v < 0) { *p++ = '-'; u = (u32)0 - u; }
  t = put_u32_rev(tmp + 12, u);
  while (t < tmp + 12) *p++ = *t++;
  return p;
}

/* Exactly width digits of v (v < 10^width). */
static u8 *put_padded(u8 *p, u32 v, int width) {
  u8 *t = p + width;
  int k = width;
  for (; k >= 2; k -= 2) { u32 q = DIV100(v); u32 d = (v - q * 100) * 2; *--t = pairs[d + 1]; *--t = pairs[d]; v = q; }
  if (k) *--t = '0' + v;
  return p + width;
}

/* Whether any byte of x is below 0x20, a quote or a backslash (8 bytes at a time: bytes of 0x80 and
   above, UTF-8, never match). */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static int needs_escape(u64 x) {
  u64 q = x ^ (ONES * 0x22), b = x ^ (ONES * 0x5c);
  return (((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS ? 1 : 0;
}

/* A JSON string of len bytes at s; the caller made room for len * 6 + 2 bytes. */
static u8 *put_string(u8 *p, const u8 *s, u32 len) {
  u32 k = 0;
  *p++ = '"';
  /* Clean 8-byte runs are copied whole; the rest byte by byte. */
  for (; k + 8 <= len; k += 8) {
    u64 x = *(const u64 *)(s + k);
    if (needs_escape(x)) break;
    *(u64 *)p = x;
    p += 8;
  }
  for (; k < len; k++) {
    u8 ch = s[k];
    if (ch >= 0x20 && ch != '"' && ch != 0x5c) { *p++ = ch; continue; }
    *p++ = 0x5c;
    switch (ch) {
      case '"': *p++ = '"'; break;
      case 0x5c: *p++ = 0x5c; break;
      case 8: *p++ = 'b'; break;
      case 9: *p++ = 't'; break;
      case 10: *p++ = 'n'; break;
      case 12: *p++ = 'f'; break;
      case 13: *p++ = 'r'; break;
      default: *p++ = 'u'; *p++ = '0'; *p++ = '0'; *p++ = hex[ch >> 4]; *p++ = hex[ch & 15];
    }
  }
  *p++ = '"';
  return p;
}

/* An inline string (at most 12 bytes, in the 16-byte header h) that needs no escape, or 0. Bytes past
   its end are read as 'a', which never needs one; the 12 bytes are stored whole (the caller made room). */
static u8 *put_inline(u8 *p, const u8 *h, u32 len) {
  u64 a = *(const u64 *)(h + 4);
  u64 b = *(const u32 *)(h + 12);
  u64 fill = ONES * 0x61;
  if (len < 8) { u64 keep = ((u64)1 << (len * 8)) - 1; a = (a & keep) | (fill & ~keep); b = fill; }
  else { u64 keep = ((u64)1 << ((len - 8) * 8)) - 1; b = (b & keep) | (fill & ~keep); }
  if (needs_escape(a) || needs_escape(b)) return 0;
  *p = '"';
  *(u64 *)(p + 1) = *(const u64 *)(h + 4);
  *(u32 *)(p + 9) = *(const u32 *)(h + 12);
  p[len + 1] = '"';
  return p + len + 2;
}

static i64 floor_div(i64 a, i64 b) { i64 q = a / b; return (q * b > a) ? q - 1 : q; }

/* Civil date of days since 1970-01-01 (proleptic Gregorian) as YYYY-MM-DD; 0 when the year is outside 0..9999. */
static int civil(i64 days, u8 *out) {
  i64 z = days + 719468;
  i64 era = floor_div(z, 146097);
  i64 doe = z - era * 146097;
  i64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  i64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  i64 mp = (5 * doy + 2) / 153;
  i64 d = doy - (153 * mp + 2) / 5 + 1;
  i64 m = mp < 10 ? mp + 3 : mp - 9;
  i64 y = yoe + era * 400 + (m <= 2);
  if (y < 0 || y > 9999) return 0;
  put_padded(out, (u32)y, 4); out[4] = '-';
  put_padded(out + 5, (u32)m, 2); out[7] = '-';
  put_padded(out + 8, (u32)d, 2);
  return 1;
}

#define MAX_COLUMNS 256

/* Writes rows from..to-1 as JSON arrays into out[pos..cap), whole rows only; a comma precedes each
   row unless first is set and it is row from. desc holds 4 doubles per column: kind, parameter (time
   unit), data and validity addresses. res[0] = bytes written, res[1] = DONE, FULL (the next row does
   not fit) or HANDBACK (the next row has a value for the JavaScript writer); when FULL, res[2] = bytes the next row
   needs at least (a fresh block that large lets it progress). Returns the next row. */
int svc_json_rows(const double *desc, i64 ncols, i64 from, i64 to, i64 first, u8 *out, i64 pos, i64 cap, double *res) {
  u8 *p = out + pos, *end = out + cap;
  int kinds[MAX_COLUMNS], units[MAX_COLUMNS];
  const u8 *datas[MAX_COLUMNS];
  const u64 *valids[MAX_COLUMNS];
  /* Per timestamp column: the second last written (as a value of its unit) and its quoted date and
     time; consecutive rows mostly share it. */
  i64 base[MAX_COLUMNS];
  u8 prefix[MAX_COLUMNS][20];
  int status = DONE;
  i64 need = 0;
  int i = (int)from;
  int n = (int)ncols;
  for (int c = 0; c < n; c++) {
    kinds[c] = (int)desc[4 * c];
    units[c] = (int)desc[4 * c + 1];
    datas[c] = (const u8 *)(u64)desc[4 * c + 2];
    valids[c] = (const u64 *)(u64)desc[4 * c + 3];
    base[c] = 0;
    prefix[c][0] = 0;
  }
  for (; i < to; i++) {
    u8 *row = p;
    if (end - p < 3) { status = FULL; need = 3; break; }
    if (i > from || !first) *p++ = ',';
    *p++ = '[';
    for (int c = 0; c < n; c++) {
      int kind = kinds[c];
      const u8 *data = datas[c];
      const u64 *valid = valids[c];
      const u8 *s = 0;
      u32 len = 0;
      u64 room;
      /* Validity first: under a NULL, DuckDB leaves a string header as the memory was, and a length
         read from it is garbage (issue 21: it sized a buffer of gigabytes). */
      int is_null = valid && !((valid[i >> 6] >> (i & 63)) & 1);
      if (is_null) room = 6;
      else if (kind == K_VARCHAR || kind == K_JSON) {
        len = *(const u32 *)(data + i * 16);
        s = len <= 12 ? data + i * 16 + 4 : *(const u8 *const *)(data + i * 16 + 8);
        room = kind == K_VARCHAR ? (u64)len * 6 + 16 : (u64)len + 4;
      } else room = 40;
      /* One more byte for the closing bracket. */
      if ((u64)(end - p) < room + 1) { need = (i64)(p - row) + (i64)room + 1; p = row; status = FULL; goto stop; }
      if (c > 0) *p++ = ',';
      if (is_null) { memcpy(p, "null", 4); p += 4; continue; }
      switch (kind) {
        case K_I8: p = put_i32(p, ((const signed char *)data)[i]); break;
        case K_I16: p = put_i32(p, ((const short *)data)[i]); break;
        case K_I32: p = put_i32(p, ((const int *)data)[i]); break;
        case K_U8: p = put_i32(p, data[i]); break;
        case K_U16: p = put_i32(p, ((const unsigned short *)data)[i]); break;
        case K_U32: p = put_u64(p, ((const u32 *)data)[i]); break;
        case K_I64: p = put_i64(p, ((const i64 *)data)[i]); break;
        case K_U64: p = put_u64(p, ((const u64 *)data)[i]); break;
        case K_BOOL:
          if (data[i]) { memcpy(p, "true", 4); p += 4; } else { memcpy(p, "false", 5); p += 5; }
          break;
        case K_TS: {
          int unit = units[c];
          i64 v = ((const i64 *)data)[i];
          /* DuckDB's infinities: in nanoseconds they fall in 1677 and 2262, inside the years written
             here, so they must be caught by value (the JavaScript writer says infinity). */
          if (v == 0x7fffffffffffffffLL || v == -0x7fffffffffffffffLL) { p = row; status = HANDBACK; goto stop; }
          /* Wrapping difference: a far value (infinity) minus the last base may not fit in an i64. */
          i64 frac = (i64)((u64)v - (u64)base[c]);
          u8 *pre = prefix[c];
          if (!pre[0] || frac < 0 || frac >= per_sec[unit]) {
            i64 sec = floor_div(v, per_sec[unit]);
            i64 days = floor_div(sec, 86400);
            i64 rem = sec - days * 86400;
            pre[0] = 0;
            if (!civil(days, pre + 1)) { p = row; status = HANDBACK; goto stop; }
            pre[0] = '"';
            pre[11] = 'T';
            put_padded(pre + 12, (u32)(rem / 3600), 2); pre[14] = ':';
            put_padded(pre + 15, (u32)(rem / 60 % 60), 2); pre[17] = ':';
            put_padded(pre + 18, (u32)(rem % 60), 2);
            /* v minus its fraction of a second, wrapping: near the smallest i64, the second's start
               in nanoseconds lies below it. */
            frac = v - (v / per_sec[unit]) * per_sec[unit];
            if (frac < 0) frac += per_sec[unit];
            base[c] = (i64)((u64)v - (u64)frac);
          }
          *(u64 *)p = *(const u64 *)pre;
          *(u64 *)(p + 8) = *(const u64 *)(pre + 8);
          *(u32 *)(p + 16) = *(const u32 *)(pre + 16);
          p += 20;
          if (frac != 0) {
            *p++ = '.';
            p = put_padded(p, (u32)frac, frac_digits[unit]);
            while (p[-1] == '0') p--;
          }
          p[0] = 'Z';
          p[1] = '"';
          p += 2;
          break;
        }
        case K_DATE: {
          *p = '"';
          if (!civil(((const int *)data)[i], p + 1)) { p = row; status = HANDBACK; goto stop; }
          p[11] = '"';
          p += 12;
          break;
        }
        case K_VARCHAR: {
          u8 *q = len <= 12 ? put_inline(p, data + i * 16, len) : 0;
          p = q ? q : put_string(p, s, len);
          break;
        }
        case K_JSON:
          /* [v,v,...] rendered by DuckDB: the values between the brackets. */
          if (len > 2) { memcpy(p, s + 1, len - 2); p += len - 2; }
          break;
        default:
          memcpy(p, "null", 4);
          p += 4;
      }
    }
    *p++ = ']';
  }
stop:
  res[0] = (double)((p - out) - pos);
  res[1] = status;
  res[2] = (double)need;
  return i;
}
