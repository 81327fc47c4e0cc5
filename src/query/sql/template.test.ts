import { expect, test } from 'bun:test';
import { fileMarker, fillTemplate, storeTemplate, templateKey } from './template.ts';

test('file lists are spliced into their own slots, quoted', () => {
  const t = `SELECT * FROM read_parquet(['${fileMarker(0)}']) a, read_parquet(['${fileMarker(2)}']) b`;
  storeTemplate(null, t, [0, 2]);
  expect(fillTemplate(t, [["/d/it's.parquet", '/d/b.parquet'], [], [`/d/${fileMarker(0)}.parquet`]])).toBe(
    `SELECT * FROM read_parquet(['/d/it''s.parquet', '/d/b.parquet']) a, read_parquet(['/d/${fileMarker(0)}.parquet']) b`,
  );
});

test('a template whose slot is missing or repeated is refused; SQL naming the marker is never cached', () => {
  expect(() => storeTemplate(null, 'SELECT 1', [0])).toThrow();
  expect(() => storeTemplate(null, `SELECT '${fileMarker(0)}', '${fileMarker(0)}'`, [0])).toThrow();
  expect(templateKey(`SELECT '${fileMarker(0)}'`, 'db', [])).toBeNull();
  expect(templateKey('SELECT 1', 'db', ['f'])).not.toBeNull();
});
