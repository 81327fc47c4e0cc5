/**
 * Usage per token: sliding minute and hour windows, running queries, and daily counters (UTC day)
 * that are written to the UsageStore once a second and at stop, so they survive a restart.
 */
import { RateWindow } from './rate-window.ts';
import type { DailyUsage, UsageStore } from './usage-store.ts';

interface TokenUsage {
  minute: RateWindow;
  hour: RateWindow;
  running: number;
  day: string;
  daily: DailyUsage;
}

/** The figures GET /api/v1/governance/usage/:token_id shows. */
export interface UsageView {
  queries_last_minute: number;
  queries_last_hour: number;
  queries_today: number;
  rows_returned_today: number;
  rejected_today: number;
  capped_today: number;
}

const DAY_MS = 86_400_000;

/** Counters of every token that ran a query since the start. */
export class UsageCounters {
  private readonly tokens = new Map<string, TokenUsage>();
  private readonly dirty = new Set<string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The current UTC day and its first millisecond, recomputed only when the clock leaves it. */
  private day = '';
  private dayStart = NaN;

  constructor(
    private readonly store: UsageStore,
    readonly now: () => number = Date.now,
  ) {}

  /** Starts the once-a-second write of changed daily counters. */
  start(): void {
    this.timer ??= setInterval(() => this.persist(), 1000);
    this.timer.unref?.();
  }

  /** Writes what changed and stops the timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.persist();
  }

  /** The token's usage, rolled to today. */
  of(tokenId: string): TokenUsage {
    const day = this.dayOf(this.now());
    let u = this.tokens.get(tokenId);
    if (!u) {
      u = { minute: new RateWindow(60, 1000), hour: new RateWindow(60, 60_000), running: 0, day, daily: this.store.load(tokenId, day) ?? zero() };
      this.tokens.set(tokenId, u);
    } else if (u.day !== day) {
      this.persistOne(tokenId, u);
      u.day = day;
      u.daily = this.store.load(tokenId, day) ?? zero();
    }
    return u;
  }

  /** A query was let in and starts running. */
  begin(tokenId: string): void {
    const u = this.of(tokenId);
    const now = this.now();
    u.minute.add(now);
    u.hour.add(now);
    u.running++;
    u.daily.queries++;
    this.dirty.add(tokenId);
  }

  /** A query ended, returning `rows` rows (cut at the cap when `capped`). */
  end(tokenId: string, rows: number, capped: boolean): void {
    const u = this.of(tokenId);
    u.running = Math.max(0, u.running - 1);
    u.daily.rows_returned += rows;
    if (capped) u.daily.capped++;
    this.dirty.add(tokenId);
  }

  /** A query was refused by a limit. */
  reject(tokenId: string): void {
    this.of(tokenId).daily.rejected++;
    this.dirty.add(tokenId);
  }

  view(tokenId: string): UsageView {
    const u = this.of(tokenId);
    const now = this.now();
    return {
      queries_last_minute: u.minute.count(now),
      queries_last_hour: u.hour.count(now),
      queries_today: u.daily.queries,
      rows_returned_today: u.daily.rows_returned,
      rejected_today: u.daily.rejected,
      capped_today: u.daily.capped,
    };
  }

  /** Writes the daily counters that changed since the last write. */
  persist(): void {
    if (this.dirty.size === 0) return;
    const entries = [...this.dirty].flatMap((id) => {
      const u = this.tokens.get(id);
      return u ? [{ tokenId: id, day: u.day, usage: { ...u.daily } }] : [];
    });
    this.dirty.clear();
    this.store.save(entries);
  }

  private dayOf(now: number): string {
    if (!(now >= this.dayStart && now < this.dayStart + DAY_MS)) {
      this.dayStart = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
      this.day = new Date(this.dayStart).toISOString().slice(0, 10);
    }
    return this.day;
  }

  private persistOne(tokenId: string, u: TokenUsage): void {
    this.store.save([{ tokenId, day: u.day, usage: { ...u.daily } }]);
    this.dirty.delete(tokenId);
  }
}

const zero = (): DailyUsage => ({ queries: 0, rows_returned: 0, rejected: 0, capped: 0 });
