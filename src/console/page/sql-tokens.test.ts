import { describe, expect, test } from 'bun:test';
import { tokenizeSql } from './sql-tokens.ts';

describe('tokenizeSql', () => {
  test('the tokens join back to the text, whatever it holds', () => {
    for (const sql of ["SELECT a, 'it''s' FROM \"db\".\"m\" -- note\nWHERE x >= 1.5e3 /* c */", "'unterminated", '/* open', 'ünïcode ✓ + $1']) {
      expect(tokenizeSql(sql).map((t) => t.text).join('')).toBe(sql);
    }
  });

  test('keywords, strings, numbers, quoted names and comments get their kinds', () => {
    const kinds = Object.fromEntries(tokenizeSql("select 'x', 42, \"Name\" -- c").filter((t) => t.kind !== 'text' && t.kind !== 'punct').map((t) => [t.text, t.kind]));
    expect(kinds).toEqual({ select: 'keyword', "'x'": 'string', '42': 'number', '"Name"': 'ident', '-- c': 'comment' });
  });

  test('a keyword inside a string or a name is not a keyword', () => {
    expect(tokenizeSql("'select'")).toEqual([{ kind: 'string', text: "'select'" }]);
    expect(tokenizeSql('selected')).toEqual([{ kind: 'text', text: 'selected' }]);
  });
});
