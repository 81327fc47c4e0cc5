/**
 * Daily usage counters per token, kept so they survive a restart (table `governance_usage_daily`).
 * The port is what the counters need; a cluster backs it with etcd.
 */
import type { CatalogDb } from '../catalog/index.ts';

/** One token's counters for one UTC day. */
export interface DailyUsage {
  queries: number;
  rows_returned: number;
  rejected: number;
  capped: number;
}

/** Storage of daily counters. */
export interface UsageStore {
  load(tokenId: string, day: string): DailyUsage | null;
  /** Stores the counters (absolute values) of each token and day given. */
  save(entries: { tokenId: string; day: string; usage: DailyUsage }[]): void;
  /** Forgets days before `day` (YYYY-MM-DD). */
  forgetBefore(day: string): void;
}

/** Daily counters in the catalog's SQLite file. */
export class SqliteUsageStore implements UsageStore {
  constructor(private readonly db: CatalogDb) {}

  load(tokenId: string, day: string): DailyUsage | null {
    return (
      this.db
        .query<DailyUsage, [string, string]>('SELECT queries, rows_returned, rejected, capped FROM governance_usage_daily WHERE token_id = ? AND day = ?')
        .get(tokenId, day) ?? null
    );
  }

  save(entries: { tokenId: string; day: string; usage: DailyUsage }[]): void {
    const put = this.db.prepare('INSERT OR REPLACE INTO governance_usage_daily (token_id, day, queries, rows_returned, rejected, capped) VALUES (?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const e of entries) put.run(e.tokenId, e.day, e.usage.queries, e.usage.rows_returned, e.usage.rejected, e.usage.capped);
    })();
  }

  forgetBefore(day: string): void {
    this.db.prepare('DELETE FROM governance_usage_daily WHERE day < ?').run(day);
  }
}
