import { describe, expect, test } from 'bun:test';
import { MetricsHistory } from './metrics-history.ts';

const values = (n: number) => ({ system: { n }, application: { n: n * 10 }, api: { n: n * 100 } });

describe('MetricsHistory', () => {
  test('keeps retention / interval points per kind, oldest overwritten first', () => {
    let n = 0;
    const h = new MetricsHistory({ intervalSeconds: 30, retentionMinutes: 2 }, () => values(++n));
    expect(h.capacity).toBe(4);
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < 6; i++) h.sampleNow(t0 + i * 30_000);
    const now = t0 + 5 * 30_000;
    expect(h.recent('system', 1440, now).map((p) => p.values.n)).toEqual([3, 4, 5, 6]);
    expect(h.recent('api', 1440, now).map((p) => p.values.n)).toEqual([300, 400, 500, 600]);
    expect(h.recent('application', 1, now).map((p) => p.values.n)).toEqual([40, 50, 60]);
    expect(h.recent('system', 1, now)[0]!.timestamp).toBe(new Date(t0 + 3 * 30_000).toISOString());
  });

  test('keeps at least one point when the interval exceeds the retention', () => {
    const h = new MetricsHistory({ intervalSeconds: 600, retentionMinutes: 1 }, () => values(1));
    expect(h.capacity).toBe(1);
  });

  test('start samples at once; stop leaves the points readable', () => {
    const h = new MetricsHistory({ intervalSeconds: 5, retentionMinutes: 30 }, () => values(7));
    h.start();
    h.stop();
    expect(h.recent('system', 30)).toHaveLength(1);
  });
});
