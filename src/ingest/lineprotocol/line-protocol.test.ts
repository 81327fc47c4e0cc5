import { describe, expect, test } from 'bun:test';
import { AppError } from '../../lib/errors.ts';
import type { Column, ColumnBatch } from '../column-batch.ts';
import { type LineProtocolOptions, MAX_LINE_ERRORS, parseLineProtocol } from './index.ts';
import { values } from '../test-support.ts';

const NOW = 1_700_000_000_123_456;
const ns: LineProtocolOptions = { precision: 'ns', now: NOW };

function parse(text: string, opts: LineProtocolOptions = ns) {
  return parseLineProtocol(text, opts);
}

/** The single batch of a body that must parse without errors. */
function only(text: string, opts: LineProtocolOptions = ns): ColumnBatch {
  const r = parse(text, opts);
  expect(r.errors).toEqual([]);
  expect(r.batches.length).toBe(1);
  return r.batches[0];
}


describe('parseLineProtocol: structure', () => {
  test('measurement, tags, fields and timestamp', () => {
    const b = only('cpu,host=h1,region=eu usage=12.5,idle=80 1700000000000000000\n');
    expect(b.measurement).toBe('cpu');
    expect(b.length).toBe(1);
    expect(Array.from(b.time)).toEqual([1_700_000_000_000_000]);
    expect([...b.columns.keys()]).toEqual(['host', 'region', 'usage', 'idle']);
    const host = b.columns.get('host') as Column;
    expect(host.type).toBe('string');
    expect(host.tag).toBe(true);
    expect(b.columns.get('usage')?.tag).toBe(false);
    expect(values(b, 'host')).toEqual(['h1']);
    expect(values(b, 'usage')).toEqual([12.5]);
    expect(values(b, 'idle')).toEqual([80]);
  });

  test('one batch per measurement, rows in arrival order', () => {
    const r = parse('cpu v=1 1000\nmem v=2 2000\ncpu v=3 3000\n', { precision: 'us', now: NOW });
    expect(r.batches.map((b) => [b.measurement, b.length])).toEqual([
      ['cpu', 2],
      ['mem', 1],
    ]);
    expect(Array.from(r.batches[0].time)).toEqual([1000, 3000]);
    expect(r.lines).toBe(3);
  });

  test('missing timestamp means now', () => {
    const b = only('cpu v=1\ncpu v=2 \ncpu v=3\r\n');
    expect(Array.from(b.time)).toEqual([NOW, NOW, NOW]);
  });

  test('comments, blank lines, CRLF, leading whitespace and a last line without newline', () => {
    const r = parse('# header\r\n\r\n   \ncpu v=1 1000\r\n  # indented comment\n\tcpu v=2 2000\n\ncpu v=3 3000', {
      precision: 'us',
      now: NOW,
    });
    expect(r.errors).toEqual([]);
    expect(r.lines).toBe(3);
    expect(Array.from(r.batches[0].time)).toEqual([1000, 2000, 3000]);
  });

  test('empty body', () => {
    expect(parse('')).toEqual({ batches: [], errors: [], lines: 0, rejected: 0 });
    expect(parseLineProtocol(new Uint8Array(0), ns).batches).toEqual([]);
  });

  test('accepts bytes as well as text, including a subarray view', () => {
    const bytes = new TextEncoder().encode('xxcpu v=1 5000\nyy');
    const r = parseLineProtocol(bytes.subarray(2, 15), { precision: 'us', now: NOW });
    expect(r.errors).toEqual([]);
    expect(Array.from(r.batches[0].time)).toEqual([5000]);
  });

  test('a field missing in some lines is NULL, never 0', () => {
    const b = only('m a=1,b=2i 1\nm a=3 2\nm b=4i,c="x" 3\nm d=t 4\n');
    expect(values(b, 'a')).toEqual([1, 3, null, null]);
    expect(values(b, 'b')).toEqual([2n, null, 4n, null]);
    expect(values(b, 'c')).toEqual([null, null, 'x', null]);
    expect(values(b, 'd')).toEqual([null, null, null, true]);
  });

  test('tags absent in some lines are null strings', () => {
    const b = only('m,a=1 v=1 1\nm v=2 2\nm,b=2 v=3 3\n');
    expect(values(b, 'a')).toEqual(['1', null, null]);
    expect(values(b, 'b')).toEqual([null, null, '2']);
    expect(b.columns.get('a')?.valid).toBeNull();
  });

  test('keys in a different order from line to line', () => {
    const b = only('m,x=1,y=2 a=1,b=2 1\nm,y=3,x=4 b=3,a=4 2\nm,x=5 c=1,a=5 3\n');
    expect(values(b, 'x')).toEqual(['1', '4', '5']);
    expect(values(b, 'y')).toEqual(['2', '3', null]);
    expect(values(b, 'a')).toEqual([1, 4, 5]);
    expect(values(b, 'b')).toEqual([2, 3, null]);
  });

  test('duplicate field key in one line: the last value wins', () => {
    expect(values(only('m a=1,a=2 1\n'), 'a')).toEqual([2]);
  });

  test('grows columns past their initial capacity', () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(i % 3 === 0 ? `m,h=h${i % 7} a=${i},n=${i}i ${i}` : `m b=${i}i ${i}`);
    const b = only(lines.join('\n'), { precision: 'us', now: NOW });
    expect(b.length).toBe(5000);
    const a = values(b, 'a');
    const n = values(b, 'n');
    const h = values(b, 'h');
    for (let i = 0; i < 5000; i++) {
      expect(a[i]).toBe(i % 3 === 0 ? i : null);
      expect(n[i]).toBe(i % 3 === 0 ? BigInt(i) : null);
      expect(h[i]).toBe(i % 3 === 0 ? `h${i % 7}` : null);
      expect(b.time[i]).toBe(i);
    }
  });
});

describe('parseLineProtocol: values', () => {
  test('floats in every accepted spelling', () => {
    const b = only('m a=1,b=-2.5,c=1.,d=-.5,e=.25,f=1e3,g=1.5E-3,h=-2e+2,i=0,j=-0.0,k=123456789.123456789,l=0.1 1\n');
    expect(values(b, 'a')).toEqual([1]);
    expect(values(b, 'b')).toEqual([-2.5]);
    expect(values(b, 'c')).toEqual([1]);
    expect(values(b, 'd')).toEqual([-0.5]);
    expect(values(b, 'e')).toEqual([0.25]);
    expect(values(b, 'f')).toEqual([1000]);
    expect(values(b, 'g')).toEqual([0.0015]);
    expect(values(b, 'h')).toEqual([-200]);
    expect(values(b, 'i')).toEqual([0]);
    expect(Object.is(values(b, 'j')[0], -0)).toBe(true);
    expect(values(b, 'k')).toEqual([123456789.123456789]);
    expect(values(b, 'l')).toEqual([0.1]);
  });

  test('floats parse exactly like Number() (fast and slow paths)', () => {
    const samples: string[] = [];
    for (let i = 0; i < 2000; i++) {
      samples.push(String(Math.random() * 10 ** ((i % 30) - 10)));
      samples.push((Math.random() * 1000).toFixed(i % 20));
      samples.push(`${i % 97}.${String(i * 7919).padStart(i % 25, '0')}`);
    }
    samples.push('9007199254740993', '0.30000000000000004', '1.7976931348623157e308', '5e-324', '123456789012345678901234567890');
    const body = samples.map((s, i) => `m v=${s} ${i}`).join('\n');
    const b = only(body, { precision: 'us', now: NOW });
    const got = values(b, 'v');
    samples.forEach((s, i) => expect(got[i]).toBe(Number(s)));
  });

  test('integers and unsigned integers are int64, exact up to the int64 limits', () => {
    const b = only(
      'm a=1i,b=-42i,c=9223372036854775807i,d=-9223372036854775808i,e=7u,f=9223372036854775807u,g=9007199254740993i,h=-0i 1\n',
    );
    expect(b.columns.get('a')?.type).toBe('int64');
    expect(b.columns.get('e')?.type).toBe('int64');
    expect(values(b, 'a')).toEqual([1n]);
    expect(values(b, 'b')).toEqual([-42n]);
    expect(values(b, 'c')).toEqual([9223372036854775807n]);
    expect(values(b, 'd')).toEqual([-9223372036854775808n]);
    expect(values(b, 'e')).toEqual([7n]);
    expect(values(b, 'f')).toEqual([9223372036854775807n]);
    expect(values(b, 'g')).toEqual([9007199254740993n]);
    expect(values(b, 'h')).toEqual([0n]);
  });

  test('negative safe integers keep their two-complement halves right', () => {
    const nums = [-1, -2, -4294967296, -4294967297, -9007199254740991, 4294967295, 4294967296, 9007199254740991];
    const b = only(nums.map((n, i) => `m v=${n}i ${i}`).join('\n'), { precision: 'us', now: NOW });
    expect(values(b, 'v')).toEqual(nums.map((n) => BigInt(n)));
  });

  test('booleans in every accepted spelling', () => {
    const b = only('m a=t,b=T,c=true,d=True,e=TRUE,f=f,g=F,h=false,i=False,j=FALSE 1\n');
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => values(b, k)[0])).toEqual([true, true, true, true, true]);
    expect(['f', 'g', 'h', 'i', 'j'].map((k) => values(b, k)[0])).toEqual([false, false, false, false, false]);
    expect(b.columns.get('a')?.type).toBe('bool');
  });

  test('string fields with escapes, delimiters, unicode and empty strings', () => {
    const b = only('m a="hello world",b="say \\"hi\\"",c="back\\\\slash",d="a,b=c d",e="",f="héllo ✓",g="lit\\eral" 1\n');
    expect(values(b, 'a')).toEqual(['hello world']);
    expect(values(b, 'b')).toEqual(['say "hi"']);
    expect(values(b, 'c')).toEqual(['back\\slash']);
    expect(values(b, 'd')).toEqual(['a,b=c d']);
    expect(values(b, 'e')).toEqual(['']);
    expect(values(b, 'f')).toEqual(['héllo ✓']);
    expect(values(b, 'g')).toEqual(['lit\\eral']);
    expect(b.columns.get('a')?.tag).toBe(false);
  });

  test('escapes in measurement, tag keys, tag values and field keys', () => {
    const b = only('cpu,ta\\=g\\ k=v\\,a\\ l\\=1,pa\\\\th=c:\\\\d fi\\ eld\\,1=1 1\n');
    expect(b.measurement).toBe('cpu');
    expect(values(b, 'ta=g k')).toEqual(['v,a l=1']);
    expect(values(b, 'pa\\th')).toEqual(['c:\\d']);
    expect(values(b, 'fi eld,1')).toEqual([1]);
  });

  test('escaped measurement names are unescaped, then checked against the name rules', () => {
    const r = parse('my\\ cpu\\,x v=1 1\n');
    expect(r.errors[0].message).toContain("invalid measurement name 'my cpu,x'");
  });

  test('unicode names and tag values', () => {
    const b = only('m,城市=北京 温度=21.5 1\n');
    expect(values(b, '城市')).toEqual(['北京']);
    expect(values(b, '温度')).toEqual([21.5]);
  });
});

describe('parseLineProtocol: timestamps', () => {
  test('each precision converts to microseconds', () => {
    const t = (text: string, precision: LineProtocolOptions['precision']) => Array.from(only(text, { precision, now: NOW }).time);
    expect(t('m v=1 1700000000123456789\n', 'ns')).toEqual([1_700_000_000_123_456]);
    expect(t('m v=1 1700000000123456\n', 'us')).toEqual([1_700_000_000_123_456]);
    expect(t('m v=1 1700000000123\n', 'ms')).toEqual([1_700_000_000_123_000]);
    expect(t('m v=1 1700000000\n', 's')).toEqual([1_700_000_000_000_000]);
  });

  test('nanoseconds are floored without precision loss, negatives towards minus infinity', () => {
    const b = only('m v=1 9007199254740991999\nm v=1 999\nm v=1 -1\nm v=1 -1000\nm v=1 -1001\nm v=1 0\n');
    expect(Array.from(b.time)).toEqual([9007199254740991, 0, -1, -1, -2, 0]);
  });

  test('timestamps beyond 2^53 microseconds or int64 nanoseconds are line errors', () => {
    const r = parse('m v=1 9223372036854775807\nm v=1 99999999999999999999\nm v=1 9007199254740992\n', {
      precision: 'us',
      now: NOW,
    });
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3]);
    expect(r.errors[0].message).toContain('out of range');
    expect(parse('m v=1 10000000000000\n', { precision: 's', now: NOW }).errors.length).toBe(1);
  });

  test('invalid timestamps are line errors', () => {
    const r = parse('m v=1 12a\nm v=1 1.5\nm v=1 -\nm v=1 1 2\nm v=1 1000\n', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4]);
    expect(r.errors[0].message).toBe("cannot parse timestamp '12a': invalid timestamp");
    expect(r.batches[0].length).toBe(1);
  });
});

describe('parseLineProtocol: line errors', () => {
  test('bad lines are reported with their number; good lines are kept', () => {
    const text = [
      'cpu v=1 1', //          1 ok
      'cpu', //                2 missing fields
      'cpu,host v=1 1', //     3 tag without '='
      'cpu,host= v=1 1', //    4 missing tag value
      'cpu v= 1', //           5 missing field value
      'cpu v=abc 1', //        6 invalid value
      'cpu v="open 1', //      7 unterminated string
      ',t=1 v=1 1', //         8 missing measurement
      'cpu v=1i2 1', //        9 invalid value
      'cpu =1 1', //           10 missing field key
      'cpu v=1 2', //          11 ok
    ].join('\n');
    const r = parse(text, { precision: 'us', now: NOW });
    expect(r.lines).toBe(11);
    expect(r.rejected).toBe(9);
    expect(r.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(r.errors.map((e) => e.message)).toEqual([
      'missing fields',
      "cannot parse tag 'host': missing '='",
      "cannot parse tag 'host': missing tag value",
      "cannot parse field 'v': missing field value",
      "cannot parse field 'v': invalid value 'abc'",
      "cannot parse field 'v': unterminated string",
      'missing measurement name',
      "cannot parse field 'v': invalid value '1i2'",
      'missing field key',
    ]);
    expect(Array.from(r.batches[0].time)).toEqual([1, 2]);
  });

  test('a rejected line leaves no trace in the columns', () => {
    const r = parse('m,a=1 x=1,y=2 1\nm,a=2,b=9 x=2,z="new",y=bad 2\nm,a=3 x=3 3\n', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([2]);
    const b = r.batches[0];
    expect([...b.columns.keys()]).toEqual(['a', 'x', 'y']);
    expect(values(b, 'a')).toEqual(['1', '3']);
    expect(values(b, 'x')).toEqual([1, 3]);
    expect(values(b, 'y')).toEqual([2, null]);
  });

  test('a column first seen in a rejected line does not fix its type', () => {
    const r = parse('m a=1i,b=oops 1\nm a="text" 2\n', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([1]);
    expect(values(r.batches[0], 'a')).toEqual(['text']);
  });

  test('field type conflict within one body rejects the conflicting line', () => {
    const r = parse('m v=1.5 1\nm v=2i 2\nm v=true 3\nm v="s" 4\nm v=3 5\n', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([2, 3, 4]);
    expect(r.errors[0].message).toBe("field type conflict: field 'v' is integer here but float in earlier lines");
    expect(values(r.batches[0], 'v')).toEqual([1.5, 3]);
  });

  test('field keys colliding with tag keys, reserved time, duplicate tags', () => {
    const r = parse('m,host=a host=1 1\nm,host=a v=1 2\nm v=1,host=2 3\nm,time=x v=1 4\nm time=1 5\nm,a=1,a=2 v=1 6\n', {
      precision: 'us',
      now: NOW,
    });
    expect(r.errors.map((e) => e.line)).toEqual([1, 3, 4, 5, 6]);
    expect(r.errors[0].message).toBe("cannot use field key 'host': it collides with a tag key");
    expect(r.errors[1].message).toBe("cannot use field key 'host': it collides with a tag key");
    expect(r.errors[2].message).toContain("cannot use tag key 'time'");
    expect(r.errors[3].message).toContain("cannot use field key 'time'");
    expect(r.errors[4].message).toBe("duplicate tag key 'a'");
  });

  test('a tag key that is already a field is refused', () => {
    const r = parse('m host=1 1\nm,host=a v=1 2\n', { precision: 'us', now: NOW });
    expect(r.errors).toEqual([{ line: 2, message: "cannot use tag key 'host': it is already a field of this measurement" }]);
  });

  test('invalid measurement and column names are line errors', () => {
    const r = parse('cpu.load v=1 1\n-cpu v=1 2\ncpu v\u0001x=1 3\ncpu v=1 4\n', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3]);
    expect(r.errors[0].message).toContain("invalid measurement name 'cpu.load'");
    expect(r.errors[2].message).toContain('control characters');
    expect(r.batches.length).toBe(1);
  });

  test('unsigned and integer range errors', () => {
    const r = parse('m a=-1u 1\nm a=9223372036854775808u 2\nm a=9223372036854775808i 3\nm a=-9223372036854775809i 4\nm a=1.5i 5\n');
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5]);
    expect(r.errors[1].message).toContain('above the int64 maximum');
    expect(r.batches).toEqual([]);
  });

  test('infinite and non-number floats are refused', () => {
    const r = parse('m a=1e400 1\nm a=NaN 2\nm a=inf 3\nm a=1e 4\nm a=- 5\nm a=. 6\n');
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.errors[0].message).toContain('float out of range');
  });

  test('keeps at most MAX_LINE_ERRORS messages but counts every rejected line', () => {
    const r = parse('bad\n'.repeat(MAX_LINE_ERRORS + 5));
    expect(r.errors.length).toBe(MAX_LINE_ERRORS);
    expect(r.rejected).toBe(MAX_LINE_ERRORS + 5);
    expect(r.lines).toBe(MAX_LINE_ERRORS + 5);
  });

  test('an error on the unterminated last line keeps its line number', () => {
    const r = parse('m v=1 1\nm v=x 2', { precision: 'us', now: NOW });
    expect(r.errors.map((e) => e.line)).toEqual([2]);
  });

  test('bad options throw AppError invalid', () => {
    expect(() => parseLineProtocol('m v=1', { precision: 'h' as 'ns', now: NOW })).toThrow(AppError);
    expect(() => parseLineProtocol('m v=1', { precision: 'ns', now: Number.NaN })).toThrow(AppError);
  });
});
