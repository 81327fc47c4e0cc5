import { afterAll, describe, expect, test } from 'bun:test';
import { AppError } from '../../lib/errors.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { parseLineProtocol, type LineProtocolOptions, type LineProtocolResult } from '../lineprotocol/index.ts';
import { parseMsgpackWrite } from '../msgpack/index.ts';
import { values } from '../test-support.ts';
import { Packr } from 'msgpackr';
import { MIN_OFFLOAD_BYTES, ParsePool } from './index.ts';

const opts: LineProtocolOptions = { precision: 'ns', now: 1_700_000_000_123_456 };

/** A body of `lines` lines over two measurements with every field type, escapes and a few bad lines. */
function body(lines: number): Uint8Array {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    if (i % 997 === 500) out.push(`cpu,host=h${i} usage=oops ${i}`);
    else if (i % 3 === 0) out.push(`mem,host=h${i % 7},dc=a\\ b used=${i}i,ok=${i % 2 ? 't' : 'false'},note="n \\"${i % 5}\\"" ${1_700_000_000_000_000_000n + BigInt(i)}`);
    else out.push(`cpu,host=host_${i % 100},region=r${i % 10} usage_user=${(i * 0.37).toFixed(3)},load=${i % 4}.5 ${1_700_000_000_000_000_000n + BigInt(i) * 1000n}`);
  }
  return new TextEncoder().encode(out.join('\n') + '\n');
}

/** A result as plain data: every column's values per batch. */
function plain(r: LineProtocolResult) {
  const batch = (b: ColumnBatch) => ({
    measurement: b.measurement,
    length: b.length,
    time: Array.from(b.time),
    columns: [...b.columns].map(([name, c]) => ({ name, type: c.type, tag: c.tag, values: values(b, name) })),
  });
  return { batches: r.batches.map(batch), errors: r.errors, lines: r.lines, rejected: r.rejected };
}

const pool = new ParsePool(2);
afterAll(() => pool.close());

describe('ParsePool', () => {
  test('a large body parsed in a worker gives exactly the in-place result (rows, types, NULLs, line errors)', async () => {
    const bytes = body(5000);
    expect(bytes.byteLength).toBeGreaterThan(MIN_OFFLOAD_BYTES);
    const here = plain(parseLineProtocol(bytes, opts));
    expect(here.rejected).toBeGreaterThan(0);
    const before = pool.offloaded;
    expect(plain(await pool.parseLineProtocol(bytes, opts))).toEqual(here);
    expect(pool.offloaded).toBe(before + 1);
  });

  test('a small body is parsed in place', async () => {
    const bytes = body(20);
    const before = pool.offloaded;
    expect(plain(await pool.parseLineProtocol(bytes, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
    expect(pool.offloaded).toBe(before);
  });

  test('concurrent bodies each get their own answer', async () => {
    const bodies = [body(3000), body(4000), body(5000), body(6000), body(2000)];
    const expected = bodies.map((b) => plain(parseLineProtocol(b, opts)));
    const before = pool.offloaded;
    const results = await Promise.all(bodies.map((b) => pool.parseLineProtocol(b, opts)));
    expect(pool.offloaded).toBe(before + bodies.length);
    results.forEach((r, i) => expect(plain(r)).toEqual(expected[i]!));
  });

  test('a whole-buffer body is handed over without a copy (detached here), a view is copied', async () => {
    const whole = body(3000).slice(); // a buffer of its own, as a received request body is
    await pool.parseLineProtocol(whole, opts);
    expect(whole.byteLength).toBe(0);
    const big = body(3000);
    const view = big.subarray(0, big.byteLength - 1);
    await pool.parseLineProtocol(view, opts);
    expect(big.byteLength).toBeGreaterThan(0);
  });

  test('a view into a larger buffer is parsed as just the view', async () => {
    const bytes = body(3000);
    const big = new Uint8Array(bytes.byteLength + 1000);
    big.set(bytes, 500);
    big.fill(35, 0, 500); // '#' comments would add nothing; garbage before the view must not be read
    const view = big.subarray(500, 500 + bytes.byteLength);
    expect(plain(await pool.parseLineProtocol(view, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
  });

  test("the parser's own error reaches the caller (a bad option throws an AppError)", async () => {
    const bad = { precision: 'h', now: 0 } as unknown as LineProtocolOptions;
    const err = await pool.parseLineProtocol(body(2000), bad).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toContain("unknown precision 'h'");
  });

  test('MessagePack: a large body parsed in a worker gives the in-place batches; a bad one the same 400', async () => {
    const rows = 6000;
    const columns = {
      time: Array.from({ length: rows }, (_, i) => 1_700_000_000_000_000 + i),
      host: Array.from({ length: rows }, (_, i) => `host_${i % 100}`),
      v: Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : i * 0.25)),
      n: Array.from({ length: rows }, (_, i) => i),
    };
    const bytes = new Packr({ useRecords: false }).pack({ m: 'cpu', columns }).slice();
    expect(bytes.byteLength).toBeGreaterThan(MIN_OFFLOAD_BYTES);
    const now = 1_700_000_000_123_456;
    const here = plain({ batches: parseMsgpackWrite(bytes, { now }), errors: [], lines: 0, rejected: 0 });
    const before = pool.offloaded;
    const batches = await pool.parseMsgpack(bytes, now);
    expect(pool.offloaded).toBe(before + 1);
    expect(plain({ batches, errors: [], lines: 0, rejected: 0 })).toEqual(here);

    const bad = new Packr({ useRecords: false }).pack({ m: 'cpu', columns: { ...columns, n: columns.n.slice(1) } }).slice();
    const inPlace = (() => {
      try {
        parseMsgpackWrite(bad, { now });
      } catch (err) {
        return err as AppError;
      }
    })();
    expect(inPlace).toBeInstanceOf(AppError);
    const pooled = await pool.parseMsgpack(bad, now).then(() => null, (e: unknown) => e as AppError);
    expect(pooled).toBeInstanceOf(AppError);
    expect({ status: pooled!.status, message: pooled!.message }).toEqual({ status: inPlace!.status, message: inPlace!.message });
  });

  test('size 0 parses in place with the same result', async () => {
    const none = new ParsePool(0);
    const bytes = body(2000);
    expect(plain(await none.parseLineProtocol(bytes, opts))).toEqual(plain(parseLineProtocol(bytes, opts)));
    await none.close();
  });
});
