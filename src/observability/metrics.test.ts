import { describe, expect, test } from 'bun:test';
import { MetricsRegistry } from './metrics.ts';

describe('MetricsRegistry', () => {
  test('renders counters, gauges and cumulative histograms in exposition format 0.0.4', () => {
    const r = new MetricsRegistry();
    r.counter('a_total', 'Things \\ counted\nover time').inc(2, { group: 'x"y' });
    r.gauge('g', 'A gauge').set(Infinity);
    const h = r.histogram('lat_seconds', 'Latency', [0.1, 1]);
    h.observe(0.05, { group: 'w' });
    h.observe(0.5, { group: 'w' });
    h.observe(5, { group: 'w' });
    expect(r.renderPrometheus()).toBe(
      [
        '# HELP a_total Things \\\\ counted\\nover time',
        '# TYPE a_total counter',
        'a_total{group="x\\"y"} 2',
        '# HELP g A gauge',
        '# TYPE g gauge',
        'g +Inf',
        '# HELP lat_seconds Latency',
        '# TYPE lat_seconds histogram',
        'lat_seconds_bucket{group="w",le="0.1"} 1',
        'lat_seconds_bucket{group="w",le="1"} 2',
        'lat_seconds_bucket{group="w",le="+Inf"} 3',
        'lat_seconds_sum{group="w"} 5.55',
        'lat_seconds_count{group="w"} 3',
        '',
      ].join('\n'),
    );
  });

  test('an untouched counter or gauge still exports one 0 sample', () => {
    const r = new MetricsRegistry();
    r.counter('c_total', 'c');
    r.gauge('g', 'g');
    expect(r.renderPrometheus()).toContain('c_total 0\n');
    expect(r.renderPrometheus()).toContain('g 0\n');
  });

  test('families() carries the same series as JSON; snapshot() sums over labels', () => {
    const r = new MetricsRegistry();
    const c = r.counter('c_total', 'c');
    c.inc(1, { group: 'a' });
    c.inc(2, { group: 'b' });
    r.histogram('h', 'h', [1]).observe(0.5);
    const f = r.families();
    expect(f.c_total).toEqual({ type: 'counter', help: 'c', samples: [{ labels: { group: 'a' }, value: 1 }, { labels: { group: 'b' }, value: 2 }] });
    expect(f.h!.samples).toEqual([{ labels: {}, buckets: { '1': 1, '+Inf': 1 }, sum: 0.5, count: 1 }]);
    expect(r.snapshot()).toEqual({ c_total: 3, h: { count: 1, sum: 0.5 } });
  });

  test('a gauge can read its value from another part at scrape time', () => {
    const r = new MetricsRegistry();
    const g = r.gauge('inflight', 'i');
    let n = 3;
    g.collectFrom(() => n);
    n = 4;
    expect(g.value()).toBe(4);
    expect(r.renderPrometheus()).toContain('inflight 4\n');
  });

  test('registering a name twice returns the same metric; a different kind throws', () => {
    const r = new MetricsRegistry();
    expect(r.counter('x', 'x')).toBe(r.counter('x', 'again'));
    expect(() => r.gauge('x', 'x')).toThrow(/different kinds/);
  });

  test('a labeled series handle adds to the same series as inc and observe with those labels', () => {
    const [a, b] = [new MetricsRegistry(), new MetricsRegistry()];
    for (const r of [a, b]) r.counter('c_total', 'c').inc(1, { group: 'w' });
    a.counter('c_total', 'c').inc(2, { group: 'w' });
    a.counter('c_total', 'c').inc(1, { group: 'q' });
    a.histogram('h_seconds', 'h', [0.1, 1]).observe(0.5, { group: 'w' });
    const c = b.counter('c_total', 'c').labeled({ group: 'w' });
    c.inc(2);
    b.counter('c_total', 'c').labeled({ group: 'q' }).inc();
    b.histogram('h_seconds', 'h', [0.1, 1]).labeled({ group: 'w' }).observe(0.5);
    // A handle never used adds no series.
    b.counter('c_total', 'c').labeled({ group: 'unused' });
    expect(b.renderPrometheus()).toBe(a.renderPrometheus());
  });
});
