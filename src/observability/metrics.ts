/** Label values of one series, e.g. `{ route: "/api/v1/query" }`. */
export type Labels = Record<string, string>;

const key = (labels?: Labels) => (labels ? JSON.stringify(Object.entries(labels).sort()) : '');
const parseKey = (k: string): Labels => (k ? Object.fromEntries(JSON.parse(k) as [string, string][]) : {});

/** A monotonically increasing count. */
export class Counter {
  readonly kind = 'counter';
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(n = 1, labels?: Labels): void {
    const k = key(labels);
    this.series.set(k, (this.series.get(k) ?? 0) + n);
  }
  value(labels?: Labels): number {
    return this.series.get(key(labels)) ?? 0;
  }
  /** One series, its key built once: for hot paths that would otherwise build it on every `inc`. */
  labeled(labels: Labels): { inc(n?: number): void } {
    const k = key(labels);
    const series = this.series;
    return { inc: (n = 1) => void series.set(k, (series.get(k) ?? 0) + n) };
  }
  /** Sum over every label set. */
  total(): number {
    let t = 0;
    for (const v of this.series.values()) t += v;
    return t;
  }
  samples(): { labels: Labels; value: number }[] {
    if (this.series.size === 0) return [{ labels: {}, value: 0 }];
    return [...this.series].map(([k, v]) => ({ labels: parseKey(k), value: v }));
  }
}

/** A value that goes up and down; `collect` samples it lazily at scrape time. */
export class Gauge {
  readonly kind = 'gauge';
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    private collect?: () => number,
  ) {}
  /** Reads the value from `source` at every scrape instead of from `set` (for figures owned by another part). */
  collectFrom(source: () => number): void {
    this.collect = source;
  }
  set(v: number, labels?: Labels): void {
    this.series.set(key(labels), v);
  }
  value(labels?: Labels): number {
    if (this.collect && !labels) return this.collect();
    return this.series.get(key(labels)) ?? 0;
  }
  samples(): { labels: Labels; value: number }[] {
    if (this.collect) return [{ labels: {}, value: this.collect() }];
    if (this.series.size === 0) return [{ labels: {}, value: 0 }];
    return [...this.series].map(([k, v]) => ({ labels: parseKey(k), value: v }));
  }
}

/** Latency buckets in seconds, from 1 ms to 60 s. */
export const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A distribution of observations in cumulative buckets. */
export class Histogram {
  readonly kind = 'histogram';
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = DEFAULT_BUCKETS,
  ) {}
  observe(v: number, labels?: Labels): void {
    this.record(key(labels), v);
  }
  /** One series, its key built once (see Counter.labeled). */
  labeled(labels: Labels): { observe(v: number): void } {
    const k = key(labels);
    return { observe: (v) => this.record(k, v) };
  }
  private record(k: string, v: number): void {
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) s.counts[i]!++;
    s.sum += v;
    s.count++;
  }
  samples(): { labels: Labels; counts: number[]; sum: number; count: number }[] {
    return [...this.series].map(([k, s]) => ({ labels: parseKey(k), ...s }));
  }
}

export type Metric = Counter | Gauge | Histogram;

/** One metric in the JSON form of /metrics: counters and gauges carry `value`, histograms `buckets`/`sum`/`count`. */
export interface MetricFamily {
  type: Metric['kind'];
  help: string;
  samples: ({ labels: Labels; value: number } | { labels: Labels; buckets: Record<string, number>; sum: number; count: number })[];
}

/** All metrics of the process by name; renders Prometheus text and a JSON snapshot. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string): Counter {
    return this.register(new Counter(name, help));
  }
  gauge(name: string, help: string, collect?: () => number): Gauge {
    return this.register(new Gauge(name, help, collect));
  }
  histogram(name: string, help: string, buckets?: number[]): Histogram {
    return this.register(new Histogram(name, help, buckets));
  }

  /** A metric by name (undefined if never registered). */
  get(name: string): Metric | undefined {
    return this.metrics.get(name);
  }

  all(): Metric[] {
    return [...this.metrics.values()];
  }

  /** Prometheus text exposition format 0.0.4. */
  renderPrometheus(): string {
    const lines: string[] = [];
    for (const m of this.metrics.values()) {
      lines.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${m.name} ${m.kind}`);
      if (m instanceof Histogram) {
        for (const s of m.samples()) {
          m.buckets.forEach((b, i) => lines.push(`${m.name}_bucket${fmtLabels({ ...s.labels, le: String(b) })} ${s.counts[i]}`));
          lines.push(`${m.name}_bucket${fmtLabels({ ...s.labels, le: '+Inf' })} ${s.count}`);
          lines.push(`${m.name}_sum${fmtLabels(s.labels)} ${fmtValue(s.sum)}`, `${m.name}_count${fmtLabels(s.labels)} ${s.count}`);
        }
      } else for (const s of m.samples()) lines.push(`${m.name}${fmtLabels(s.labels)} ${fmtValue(s.value)}`);
    }
    return lines.join('\n') + '\n';
  }

  /** Every series of every metric as JSON: the same content as the text exposition, keyed by metric name. */
  families(): Record<string, MetricFamily> {
    const out: Record<string, MetricFamily> = {};
    for (const m of this.metrics.values()) {
      if (m instanceof Histogram)
        out[m.name] = {
          type: m.kind,
          help: m.help,
          samples: m.samples().map((s) => ({
            labels: s.labels,
            buckets: Object.fromEntries([...m.buckets.map((b, i) => [String(b), s.counts[i]!]), ['+Inf', s.count]]),
            sum: s.sum,
            count: s.count,
          })),
        };
      else out[m.name] = { type: m.kind, help: m.help, samples: m.samples() };
    }
    return out;
  }

  /** Name -> value (counters and gauges summed over labels; histograms as count/sum). */
  snapshot(): Record<string, number | { count: number; sum: number }> {
    const out: Record<string, number | { count: number; sum: number }> = {};
    for (const m of this.metrics.values()) {
      if (m instanceof Histogram) {
        const s = m.samples();
        out[m.name] = { count: s.reduce((a, x) => a + x.count, 0), sum: s.reduce((a, x) => a + x.sum, 0) };
      } else out[m.name] = m.samples().reduce((a, x) => a + x.value, 0);
    }
    return out;
  }

  private register<T extends Metric>(m: T): T {
    const existing = this.metrics.get(m.name);
    if (existing) {
      if (existing.kind !== m.kind) throw new Error(`metric ${m.name} registered twice with different kinds`);
      return existing as T;
    }
    this.metrics.set(m.name, m);
    return m;
  }
}

/** Prometheus spells infinities `+Inf`/`-Inf`; JavaScript would print `Infinity`. */
function fmtValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function fmtLabels(labels: Labels): string {
  const e = Object.entries(labels);
  if (e.length === 0) return '';
  return '{' + e.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',') + '}';
}
