/**
 * The statements a Postgres session answers itself: transaction control (svc is read-only, so a
 * transaction is a no-op), SET/RESET of client options, SHOW of a setting, DISCARD/DEALLOCATE.
 * Recognised by a small tokenizer over the statement's leading words, as query/sql/show.ts does
 * for SHOW; everything else goes to the query engine, which parses it with DuckDB.
 */

/** What a session does with one statement. */
export type LocalCommand =
  | { kind: 'empty' }
  | { kind: 'tag'; tag: string }
  | { kind: 'set'; name: string; value: string | null }
  | { kind: 'show'; name: string };

const TAGS: Record<string, string> = {
  BEGIN: 'BEGIN', START: 'BEGIN', COMMIT: 'COMMIT', END: 'COMMIT', ROLLBACK: 'ROLLBACK', ABORT: 'ROLLBACK',
  DISCARD: 'DISCARD ALL', DEALLOCATE: 'DEALLOCATE', UNLISTEN: 'UNLISTEN', CLOSE: 'CLOSE CURSOR', CHECKPOINT: 'CHECKPOINT',
};

/** Splits a simple-query string into statements at top-level semicolons (quotes, dollar quotes and comments respected). */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      i++;
      while (i < sql.length && !(sql[i] === c && sql[i + 1] !== c)) i += sql[i] === c ? 2 : 1;
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length);
        i = end < 0 ? sql.length : end + tag.length;
      } else i++;
    } else if (c === ';') {
      out.push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  out.push(sql.slice(start));
  const kept = out.filter((s) => !isBlank(s));
  return kept.length === 0 ? [''] : kept;
}

/** True when `sql` holds only whitespace and comments. */
export function isBlank(sql: string): boolean {
  return sql.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '').trim() === '';
}

/** Words of a statement's head: identifiers, quoted strings (unquoted) and `=`/`,`. */
function words(sql: string): string[] {
  const out: string[] = [];
  const re = /\s*(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)"|([A-Za-z0-9_.+:\-/]+)|(=|,))/y;
  let m: RegExpExecArray | null;
  while ((m = re.exec(sql))) out.push(m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2] !== undefined ? m[2] : (m[3] ?? m[4])!);
  return out;
}

/** The local meaning of `sql`, or null when the query engine must answer it. */
export function localCommand(sql: string, knownSetting: (name: string) => boolean): LocalCommand | null {
  if (isBlank(sql)) return { kind: 'empty' };
  const w = words(sql.replace(/--[^\n]*/g, '').trim().replace(/;\s*$/, ''));
  const head = w[0]?.toUpperCase() ?? '';
  if (TAGS[head]) return { kind: 'tag', tag: TAGS[head] };
  if (head === 'SET') {
    let rest = w.slice(1);
    if (['SESSION', 'LOCAL'].includes(rest[0]?.toUpperCase() ?? '')) rest = rest.slice(1);
    if (rest[0]?.toUpperCase() === 'TIME' && rest[1]?.toUpperCase() === 'ZONE') return { kind: 'set', name: 'timezone', value: rest.slice(2).join(' ') };
    if (rest[0]?.toUpperCase() === 'CHARACTERISTICS' || rest[0]?.toUpperCase() === 'TRANSACTION') return { kind: 'tag', tag: 'SET' };
    const name = rest[0]?.toLowerCase();
    if (!name) return null;
    const value = rest.slice(rest[1] === '=' || rest[1]?.toUpperCase() === 'TO' ? 2 : 1).filter((x) => x !== ',').join(', ');
    return { kind: 'set', name, value: value.toUpperCase() === 'DEFAULT' ? null : value };
  }
  if (head === 'RESET') return { kind: 'set', name: (w[1] ?? 'all').toLowerCase(), value: null };
  if (head === 'SHOW' && w.length >= 2) {
    const name = w[1]!.toLowerCase() === 'time' && w[2]?.toLowerCase() === 'zone' ? 'timezone' : w[1]!.toLowerCase();
    if (knownSetting(name) || name === 'all') return { kind: 'show', name };
  }
  return null;
}
