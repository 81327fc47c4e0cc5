import { describe, expect, test } from 'bun:test';
import { footer, renderCsv, renderTable, type JsonResult } from './result-text.ts';

const result: JsonResult = {
  columns: ['host', 'value', 'note'],
  types: ['VARCHAR', 'DOUBLE', 'VARCHAR'],
  data: [
    ['a', 1.5, null],
    ['long-host', 22, 'say "hi", then\nleave'],
  ],
  row_count: 2,
  execution_time_ms: 1.2,
};

describe('result text', () => {
  test('a table aligns columns: text left, numbers right, NULL shown, newlines flattened', () => {
    expect(renderTable(result)).toBe(
      ['host      | value | note', '----------+-------+---------------------', 'a         |   1.5 | NULL', 'long-host |    22 | say "hi", then leave', ''].join('\n'),
    );
  });

  test('long cells are cut with an ellipsis', () => {
    const t = renderTable({ ...result, data: [['x'.repeat(100), 1, '']] });
    expect(t).toContain('x'.repeat(59) + '…');
    expect(t).not.toContain('x'.repeat(60));
  });

  test('CSV quotes what needs quoting and leaves nulls empty', () => {
    expect(renderCsv(result)).toBe('host,value,note\na,1.5,\nlong-host,22,"say ""hi"", then\nleave"\n');
  });

  test('the footer counts rows and times', () => {
    expect(footer(result, 4.4)).toBe('(2 rows, server 1.2 ms, total 4 ms)\n');
    expect(footer({ ...result, row_count: 1 }, 0)).toMatch(/^\(1 row,/);
  });
});
