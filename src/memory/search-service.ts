/**
 * Search: without a query text, the structured filters run as SQL in the time-series service; with
 * one, the full-text index finds matches among every memory passing the filters, ranked by text
 * relevance, recency and importance (see search-ranking.ts).
 */
import type { Memory } from './memory-record.ts';
import type { MemoryService } from './memory-service.ts';
import type { MemoryFilter, Page } from './memory-sql.ts';
import { ftsQueries, rank, type Candidate, type Explanation } from './search-ranking.ts';
import { fromIndexRow, type MemoryIndex } from './memory-index.ts';

/** A search result: a memory, plus its score (and its parts, when asked) when a query text was given. */
export type SearchHit = Memory & { score?: number; explanation?: Explanation };

/** Structured search with optional full-text ranking. */
export class SearchService {
  constructor(
    private readonly memories: MemoryService,
    private readonly index: MemoryIndex,
    private readonly opts: {
      /** Best BM25 matches per index that are re-ranked with recency and importance. */
      maxCandidates: number;
      recencyHalfLifeMs: number;
    },
  ) {}

  /** Results of one search page. Without `query`, ordered by time; with it, by score. */
  async search(filter: MemoryFilter, page: Page, query?: string, explain = false, nowMs = Date.now()): Promise<SearchHit[]> {
    if (query === undefined || query.trim() === '') return this.memories.select(filter, page);
    await this.index.ready();
    const nowUs = nowMs * 1000;
    const f = { ...filter, aliveAtUs: nowUs };
    const q = ftsQueries(query);
    const lists: Candidate[][] = [];
    for (const [text, cjk] of [[q.words, false], [q.cjk, true]] as const) {
      if (text === null) continue;
      lists.push(this.index.store.match(f, text, cjk, this.opts.maxCandidates).map((h) => ({ key: h.rowid, bm25: h.bm25, timeUs: h.time_us, importance: h.importance })));
    }
    const offset = page.offset ?? 0;
    const ranked = rank(lists, nowUs, this.opts.recencyHalfLifeMs * 1000).slice(offset, offset + page.limit);
    const rows = new Map(this.index.store.rows(ranked.map((r) => r.key)).map((r) => [r.rowid, r]));
    return ranked.flatMap((r) => {
      const row = rows.get(r.key);
      if (!row) return [];
      return [{ ...fromIndexRow(row), score: r.score, ...(explain ? { explanation: r.explanation } : {}) }];
    });
  }
}
