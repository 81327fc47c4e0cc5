/**
 * Search: the structured filters run as SQL in the time-series service; an optional `query` text
 * ranks by BM25 (then recency) over the candidates those filters return, computed here.
 */
import { rankBm25 } from './bm25.ts';
import type { Memory } from './memory-record.ts';
import type { MemoryService } from './memory-service.ts';
import type { MemoryFilter, Page } from './memory-sql.ts';

/** A search result: a memory, plus its relevance when a query text was given. */
export type SearchHit = Memory & { score?: number };

/** Structured search with optional BM25 ranking. */
export class SearchService {
  constructor(
    private readonly memories: MemoryService,
    /** Most candidates fetched for BM25 ranking (the newest that match the filters). */
    private readonly maxCandidates: number,
  ) {}

  /** Results of one search page. Without `query`, ordered by time; with it, by score then recency. */
  async search(filter: MemoryFilter, page: Page, query?: string): Promise<SearchHit[]> {
    if (query === undefined || query.trim() === '') return this.memories.select(filter, page);
    const candidates = await this.memories.select(filter, { order: 'desc', limit: this.maxCandidates });
    const ranked = rankBm25(query, candidates.map((m) => m.content));
    const offset = page.offset ?? 0;
    return ranked.slice(offset, offset + page.limit).map((r) => ({ ...candidates[r.index]!, score: round(r.score) }));
  }
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
