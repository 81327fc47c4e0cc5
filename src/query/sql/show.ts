/**
 * SHOW DATABASES, SHOW MEASUREMENTS / SHOW TABLES [FROM db], SHOW COLUMNS FROM [db.]m and
 * DESCRIBE [TABLE] [db.]m: recognised by a tiny tokenizer, never passed to DuckDB as text.
 */
import { invalid } from '../../lib/errors.ts';

/** A parsed SHOW-like statement. */
export type ShowCommand =
  | { kind: 'databases' }
  | { kind: 'measurements'; database?: string }
  | { kind: 'columns'; database?: string; measurement: string };

type Token = { t: 'word'; v: string; quoted: boolean } | { t: 'dot' } | { t: 'semi' };

const USAGE = 'expected SHOW DATABASES, SHOW MEASUREMENTS [FROM <db>], SHOW TABLES [FROM <db>], SHOW COLUMNS FROM [<db>.]<m> or DESCRIBE [<db>.]<m>';

function tokenize(sql: string): Token[] | null {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '-' && sql[i + 1] === '-') while (i < sql.length && sql[i] !== '\n') i++;
    else if (c === '.') (out.push({ t: 'dot' }), i++);
    else if (c === ';') (out.push({ t: 'semi' }), i++);
    else if (c === '"' || c === '`') {
      let v = '';
      i++;
      for (;;) {
        if (i >= sql.length) return null;
        if (sql[i] === c && sql[i + 1] === c) (v += c, (i += 2));
        else if (sql[i] === c) break;
        else v += sql[i++];
      }
      i++;
      out.push({ t: 'word', v, quoted: true });
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(sql.slice(i));
      if (!m) return null;
      out.push({ t: 'word', v: m[0], quoted: false });
      i += m[0].length;
    }
  }
  while (out.length > 0 && out[out.length - 1]!.t === 'semi') out.pop();
  return out;
}

const kw = (tok: Token | undefined, ...words: string[]) => tok?.t === 'word' && !tok.quoted && words.includes(tok.v.toUpperCase());

/** Parses `sql` as a SHOW-like statement; null when it does not start with SHOW, DESCRIBE or DESC. */
export function parseShow(sql: string): ShowCommand | null {
  const toks = tokenize(sql);
  const first = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  if (first !== 'SHOW' && first !== 'DESCRIBE' && first !== 'DESC') return null;
  if (!toks) throw invalid(`cannot parse ${first} statement: ${USAGE}`);
  let p = 1;
  const name = (): { database?: string; measurement: string } => {
    const a = toks[p];
    if (a?.t !== 'word') throw invalid(`cannot parse ${first} statement: missing measurement name; ${USAGE}`);
    p++;
    if (toks[p]?.t === 'dot') {
      const b = toks[p + 1];
      if (b?.t !== 'word') throw invalid(`cannot parse ${first} statement: missing measurement name after '${a.v}.'`);
      p += 2;
      return { database: a.v, measurement: b.v };
    }
    return { measurement: a.v };
  };
  let cmd: ShowCommand;
  if (first === 'SHOW') {
    if (kw(toks[1], 'DATABASES')) {
      cmd = { kind: 'databases' };
      p = 2;
    } else if (kw(toks[1], 'MEASUREMENTS', 'TABLES')) {
      p = 2;
      if (kw(toks[2], 'FROM', 'IN')) {
        const db = toks[3];
        if (db?.t !== 'word') throw invalid(`cannot parse SHOW statement: missing database name; ${USAGE}`);
        cmd = { kind: 'measurements', database: db.v };
        p = 4;
      } else cmd = { kind: 'measurements' };
    } else if (kw(toks[1], 'COLUMNS') && kw(toks[2], 'FROM', 'IN')) {
      p = 3;
      cmd = { kind: 'columns', ...name() };
    } else throw invalid(`cannot parse SHOW statement: ${USAGE}`);
  } else {
    if (kw(toks[1], 'TABLE')) p = 2;
    if (kw(toks[p], 'SELECT', 'WITH', 'FROM')) throw invalid(`DESCRIBE takes a measurement name, not a query: ${USAGE}`);
    cmd = { kind: 'columns', ...name() };
  }
  if (p !== toks.length) throw invalid(`cannot parse ${first} statement: unexpected text after position ${p}; ${USAGE}`);
  return cmd;
}
