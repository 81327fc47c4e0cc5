import { describe, expect, test } from 'bun:test';
import { isoMicros, sqlNumber, sqlString, sqlTime } from './sql.ts';

describe('sql literals', () => {
  test('strings double single quotes and keep backslashes', () => {
    expect(sqlString("it's")).toBe("'it''s'");
    expect(sqlString("'; DROP TABLE x; --")).toBe("'''; DROP TABLE x; --'");
    expect(sqlString('a\\b')).toBe("'a\\b'");
    expect(() => sqlString('a\u0000b')).toThrow('NUL');
  });
  test('numbers must be finite', () => {
    expect(sqlNumber(0.5)).toBe('0.5');
    expect(() => sqlNumber(Number.NaN)).toThrow();
  });
  test('times keep microseconds, in UTC', () => {
    expect(isoMicros(1_700_000_000_123_456)).toBe('2023-11-14T22:13:20.123456Z');
    expect(isoMicros(1_700_000_000_000_007)).toBe('2023-11-14T22:13:20.000007Z');
    expect(sqlTime(1_700_000_000_123_456)).toBe("TIMESTAMP '2023-11-14 22:13:20.123456'");
  });
});
