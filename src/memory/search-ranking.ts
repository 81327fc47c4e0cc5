/**
 * Turning a query text into FTS5 queries, and ranking full-text matches. Pure.
 *
 * Terms are lowercase runs of Unicode letters and digits; a memory matches when it holds any term
 * (after porter stemming: "running" finds "runs"). Runs of CJK characters (written without spaces)
 * go to the trigram index instead, as substrings of at least 3 characters.
 *
 * score = 0.6 * text + 0.25 * recency + 0.15 * importance, each part in [0, 1]:
 *   text       = bm25 / best bm25 among the candidates (FTS5's BM25, k1 = 1.2, b = 0.75);
 *   recency    = 0.5 ^ (age / half-life), half-life `memory.search_recency_half_life` (30 days);
 *   importance = the memory's importance.
 */

/** Weights of the score's parts (they sum to 1). */
export const WEIGHTS = { text: 0.6, recency: 0.25, importance: 0.15 } as const;

const TOKEN_RE = /[\p{L}\p{N}]+/gu;
const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** The FTS5 queries for a text: `words` for the porter index, `cjk` for the trigram index (null: none). */
export interface FtsQueries {
  words: string | null;
  cjk: string | null;
}

/** FTS5 MATCH expressions for `text`: quoted terms joined with OR (`"database" OR "pool"`). */
export function ftsQueries(text: string): FtsQueries {
  const words = new Set<string>();
  const cjk = new Set<string>();
  for (const token of text.toLowerCase().match(TOKEN_RE) ?? []) {
    for (const run of token.match(CJK_RE) ?? []) if ([...run].length >= 3) cjk.add(run);
    for (const rest of token.split(CJK_RE)) if (rest) words.add(rest);
  }
  const or = (terms: Set<string>) => (terms.size === 0 ? null : [...terms].map((t) => `"${t}"`).join(' OR '));
  return { words: or(words), cjk: or(cjk) };
}

/** A full-text candidate: its BM25 relevance and what recency and importance need. */
export interface Candidate {
  key: number;
  bm25: number;
  timeUs: number;
  importance: number;
}

/** The parts of a score, returned with `explain: true`. */
export interface Explanation {
  bm25: number;
  text: number;
  recency: number;
  importance: number;
}

/** A ranked candidate. */
export interface Ranked {
  key: number;
  score: number;
  explanation: Explanation;
}

/**
 * Ranks candidates (one list per index; a key in both keeps its better text part) best first; ties
 * go to the newer memory.
 */
export function rank(lists: readonly (readonly Candidate[])[], nowUs: number, halfLifeUs: number): Ranked[] {
  const best = new Map<number, { c: Candidate; text: number }>();
  for (const list of lists) {
    const top = list.reduce((m, c) => Math.max(m, c.bm25), 0);
    for (const c of list) {
      const text = top > 0 ? c.bm25 / top : 1;
      const prev = best.get(c.key);
      if (!prev || text > prev.text) best.set(c.key, { c, text });
    }
  }
  const out: (Ranked & { timeUs: number })[] = [];
  for (const { c, text } of best.values()) {
    const recency = Math.pow(0.5, Math.max(0, nowUs - c.timeUs) / halfLifeUs);
    const score = WEIGHTS.text * text + WEIGHTS.recency * recency + WEIGHTS.importance * c.importance;
    out.push({ key: c.key, score: round(score), timeUs: c.timeUs, explanation: { bm25: round(c.bm25), text: round(text), recency: round(recency), importance: c.importance } });
  }
  out.sort((a, b) => b.score - a.score || b.timeUs - a.timeUs);
  return out.map(({ timeUs: _t, ...r }) => r);
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
