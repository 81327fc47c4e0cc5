import { describe, expect, test } from 'bun:test';
import { parseShow } from './show.ts';

describe('parseShow', () => {
  test.each([
    ['SHOW DATABASES', { kind: 'databases' }],
    ['show databases;', { kind: 'databases' }],
    ['SHOW MEASUREMENTS', { kind: 'measurements' }],
    ['SHOW TABLES FROM db1', { kind: 'measurements', database: 'db1' }],
    ['show tables in "my db"', { kind: 'measurements', database: 'my db' }],
    ['SHOW MEASUREMENTS FROM my-db', { kind: 'measurements', database: 'my-db' }],
    ['DESCRIBE cpu', { kind: 'columns', measurement: 'cpu' }],
    ['DESC db1.cpu', { kind: 'columns', database: 'db1', measurement: 'cpu' }],
    ['DESCRIBE TABLE db1."cpu"', { kind: 'columns', database: 'db1', measurement: 'cpu' }],
    ['SHOW COLUMNS FROM db1.cpu -- trailing comment', { kind: 'columns', database: 'db1', measurement: 'cpu' }],
  ])('%s', (sql, expected) => expect(parseShow(sql)).toEqual(expected as never));

  test('not a SHOW statement', () => {
    expect(parseShow('SELECT 1')).toBeNull();
    expect(parseShow('  WITH x AS (SELECT 1) SELECT * FROM x')).toBeNull();
  });

  test.each(['SHOW', 'SHOW USERS', 'SHOW TABLES FROM', 'DESCRIBE SELECT 1', 'DESCRIBE', 'SHOW DATABASES extra', 'SHOW TABLES FROM a; DROP TABLE x', 'DESCRIBE "unterminated'])(
    'refuses %s',
    (sql) => expect(() => parseShow(sql)).toThrow(/SHOW|DESCRIBE|measurement|database/),
  );
});
