/** The kinds of history GET /api/v1/metrics/timeseries/:type serves. */
export const HISTORY_TYPES = ['system', 'application', 'api'] as const;
export type HistoryType = (typeof HISTORY_TYPES)[number];

/** One sample of one kind: when it was taken and the figures at that moment. */
export interface HistoryPoint {
  timestamp: string;
  values: Record<string, number>;
}

/** A fixed-size ring of points, oldest overwritten first. */
class Ring {
  private readonly points: { at: number; point: HistoryPoint }[] = [];
  private next = 0;
  constructor(private readonly capacity: number) {}

  push(at: number, point: HistoryPoint): void {
    if (this.points.length < this.capacity) this.points.push({ at, point });
    else this.points[this.next] = { at, point };
    this.next = (this.next + 1) % this.capacity;
  }

  /** Points taken at or after `cutoff`, oldest first. */
  since(cutoff: number): HistoryPoint[] {
    const ordered = this.points.length < this.capacity ? this.points : [...this.points.slice(this.next), ...this.points.slice(0, this.next)];
    return ordered.filter((p) => p.at >= cutoff).map((p) => p.point);
  }
}

/**
 * The metrics history: every `intervalSeconds` it takes one sample of each kind from `collect` and keeps
 * `retentionMinutes` worth of them (metrics.timeseries_interval_seconds / timeseries_retention_minutes).
 */
export class MetricsHistory {
  /** Points kept per kind. */
  readonly capacity: number;
  private readonly rings: Record<HistoryType, Ring>;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly opts: { intervalSeconds: number; retentionMinutes: number },
    private readonly collect: () => Record<HistoryType, Record<string, number>>,
  ) {
    this.capacity = Math.max(1, Math.ceil((opts.retentionMinutes * 60) / opts.intervalSeconds));
    this.rings = { system: new Ring(this.capacity), application: new Ring(this.capacity), api: new Ring(this.capacity) };
  }

  /** Takes one sample of every kind now. */
  sampleNow(now = Date.now()): void {
    const values = this.collect();
    const timestamp = new Date(now).toISOString();
    for (const type of HISTORY_TYPES) this.rings[type].push(now, { timestamp, values: values[type] });
  }

  /** Points of `type` from the last `minutes`, oldest first. */
  recent(type: HistoryType, minutes: number, now = Date.now()): HistoryPoint[] {
    return this.rings[type].since(now - minutes * 60_000);
  }

  /** Samples now, then every interval; idempotent. The timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.sampleNow();
    this.timer = setInterval(() => this.sampleNow(), this.opts.intervalSeconds * 1000);
    this.timer.unref?.();
  }

  /** Stops sampling; kept points stay readable. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
