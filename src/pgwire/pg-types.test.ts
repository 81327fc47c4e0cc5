import { describe, expect, test } from 'bun:test';
import { DuckDBDateValue, DuckDBTimestampValue } from '@duckdb/node-api';
import pgTypes from 'pg-types';
import { binaryParamText, binaryValue, numericBinary, OID, textValue, timestamptzText } from './pg-types.ts';

const decode = (oid: number, b: Uint8Array | null) => pgTypes.getTypeParser(oid, 'binary')(Buffer.from(b!) as unknown as string);

describe('Postgres value encodings (checked with the pg client\'s own decoders)', () => {
  test('timestamptz and date, binary and text', () => {
    const ts = new DuckDBTimestampValue(1700000060123456n);
    expect((decode(OID.timestamptz, binaryValue(OID.timestamptz, ts)) as Date).toISOString()).toBe('2023-11-14T22:14:20.123Z');
    expect(new TextDecoder().decode(textValue(OID.timestamptz, ts))).toBe('2023-11-14 22:14:20.123456+00');
    expect(timestamptzText(-1n)).toBe('1969-12-31 23:59:59.999999+00');
    expect(new TextDecoder().decode(textValue(OID.date, new DuckDBDateValue(19675)))).toBe('2023-11-14');
    expect(binaryParamText(OID.timestamptz, binaryValue(OID.timestamptz, ts)!)).toBe('2023-11-14 22:14:20.123456+00:00');
  });

  test('numbers, booleans and numeric', () => {
    expect(decode(OID.int8, binaryValue(OID.int8, -5n))).toBe('-5');
    expect(decode(OID.float8, binaryValue(OID.float8, 2.5))).toBe(2.5);
    expect(decode(OID.bool, binaryValue(OID.bool, true))).toBe(true);
    // (pg-types reads the weight unsigned, so values below 1 are left out: their weight is negative.)
    for (const n of ['0', '1.25', '-12345.678', '100000000', '10000.5']) expect(Number(decode(OID.numeric, numericBinary(n)))).toBe(Number(n));
  });
});
