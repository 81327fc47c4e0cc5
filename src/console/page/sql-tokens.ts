/**
 * Splits SQL text into display tokens for the editor's colors. Display only: the server parses every
 * statement with DuckDB's own parser; a wrong color here never changes what runs.
 */

export type TokenKind = 'keyword' | 'string' | 'number' | 'comment' | 'ident' | 'punct' | 'text';

/** One token: its kind and its exact text (the tokens of a text join back to it). */
export interface SqlToken {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  (
    'select from where group by order having limit offset as and or not in is null like ilike between case when then else end ' +
    'join left right inner outer full cross on using union all distinct with asc desc true false interval over partition ' +
    'window rows range preceding following current row filter exclude replace qualify show databases measurements tables describe ' +
    'cast try_cast exists any some values lateral natural semi anti asof pivot unpivot sample'
  ).split(' '),
);

const PATTERN = /(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(\b\d+(?:\.\d*)?(?:e[+-]?\d+)?\b|\.\d+\b)|([A-Za-z_][A-Za-z0-9_$]*)|([(),;.*=<>!+\-/%|:[\]{}]+)|(\s+|[^\s])/gi;

/** Tokens of `sql`, covering every character. */
export function tokenizeSql(sql: string): SqlToken[] {
  const out: SqlToken[] = [];
  for (const m of sql.matchAll(PATTERN)) {
    const [text, comment, str, quoted, num, word, punct] = m;
    const kind: TokenKind = comment
      ? 'comment'
      : str
        ? 'string'
        : quoted
          ? 'ident'
          : num
            ? 'number'
            : word
              ? KEYWORDS.has(word.toLowerCase())
                ? 'keyword'
                : 'text'
              : punct
                ? 'punct'
                : 'text';
    const last = out.at(-1);
    // Adjacent plain text merges, so the overlay stays a few nodes long.
    if (last && last.kind === 'text' && kind === 'text') last.text += text;
    else out.push({ kind, text });
  }
  return out;
}
