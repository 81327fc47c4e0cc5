import { describe, expect, test } from 'bun:test';
import { bindWindow, timestampLiteral, windowAt } from './cq-window.ts';

const T = Date.UTC(2024, 2, 1, 12, 0, 0);

describe('continuous-query windows', () => {
  test('placeholders are bound outside strings, quoted names and comments only', () => {
    const w = { start: T, end: T + 60_000 };
    const sql = `SELECT $start AS s, '$start' AS lit, "$end" AS q, $end -- $start\n/* $end */ FROM t WHERE time >= $start AND x = $startx`;
    expect(bindWindow(sql, w)).toBe(
      `SELECT TIMESTAMP '2024-03-01 12:00:00.000' AS s, '$start' AS lit, "$end" AS q, TIMESTAMP '2024-03-01 12:01:00.000' -- $start\n/* $end */ FROM t WHERE time >= TIMESTAMP '2024-03-01 12:00:00.000' AND x = $startx`,
    );
    expect(bindWindow("SELECT 'it''s $start' || $end", w)).toBe(`SELECT 'it''s $start' || ${timestampLiteral(w.end)}`);
  });

  test('interval windows sit on the epoch grid; cron windows span the previous fire to this one', () => {
    expect(windowAt({ intervalMs: 60_000, cron: '0 3 * * *' }, T + 90_000)).toEqual({ start: T, end: T + 60_000 });
    expect(windowAt({ intervalMs: 60_000, cron: '0 3 * * *' }, T + 60_000)).toEqual({ start: T, end: T + 60_000 });
    expect(windowAt({ intervalMs: null, cron: '*/5 * * * *' }, T + 7 * 60_000)).toEqual({ start: T, end: T + 5 * 60_000 });
    // At a fire time, that fire ends the window.
    expect(windowAt({ intervalMs: null, cron: '0 * * * *' }, T)).toEqual({ start: T - 3_600_000, end: T });
  });
});
