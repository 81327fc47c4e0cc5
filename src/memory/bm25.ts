/**
 * BM25 relevance ranking over a candidate set, computed locally (no network, no model): Okapi BM25
 * with k1 = 1.2, b = 0.75 and the non-negative idf ln(1 + (N - df + 0.5) / (df + 0.5)), where N and df
 * come from the candidate set itself. Tokens are lowercase runs of Unicode letters and digits.
 */

const K1 = 1.2;
const B = 0.75;
const TOKEN_RE = /[\p{L}\p{N}]+/gu;

/** Lowercase alphanumeric tokens of `text`, in order (`"API v2, api!"` -> `["api", "v2", "api"]`). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN_RE) ?? [];
}

/** A document's score against the query, by index in the input. */
export interface Scored {
  index: number;
  score: number;
}

/**
 * Scores each document of `docs` against `query`. Returns only documents sharing at least one query
 * term, best first; equal scores keep input order (callers pass documents newest first).
 */
export function rankBm25(query: string, docs: readonly string[]): Scored[] {
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const tokenized = docs.map(tokenize);
  const avgLen = tokenized.reduce((s, t) => s + t.length, 0) / docs.length || 1;
  const df = new Map<string, number>(terms.map((t) => [t, 0]));
  const tfs = tokenized.map((tokens) => {
    const tf = new Map<string, number>();
    for (const tok of tokens) if (df.has(tok)) tf.set(tok, (tf.get(tok) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, df.get(t)! + 1);
    return tf;
  });
  const n = docs.length;
  const idf = new Map(terms.map((t) => [t, Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5))]));
  const out: Scored[] = [];
  tfs.forEach((tf, index) => {
    if (tf.size === 0) return;
    const norm = K1 * (1 - B + (B * tokenized[index]!.length) / avgLen);
    let score = 0;
    for (const [t, f] of tf) score += (idf.get(t)! * f * (K1 + 1)) / (f + norm);
    out.push({ index, score });
  });
  return out.sort((a, b) => b.score - a.score || a.index - b.index);
}
