import { expect, test } from 'bun:test';
import { parseTimeInput } from './time-input.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');

test('relative forms m, h, d, w count back from now', () => {
  expect(parseTimeInput('30m', NOW)).toBe((NOW - 30 * 60_000) * 1000);
  expect(parseTimeInput('2h', NOW)).toBe((NOW - 2 * 3_600_000) * 1000);
  expect(parseTimeInput('7d', NOW)).toBe((NOW - 7 * 86_400_000) * 1000);
  expect(parseTimeInput('1w', NOW)).toBe((NOW - 604_800_000) * 1000);
});

test('ISO 8601: zone-less means UTC; offsets and microseconds are honoured', () => {
  expect(parseTimeInput('2025-01-02', NOW)).toBe(Date.parse('2025-01-02T00:00:00Z') * 1000);
  expect(parseTimeInput('2025-01-02T03:04:05', NOW)).toBe(Date.parse('2025-01-02T03:04:05Z') * 1000);
  expect(parseTimeInput('2025-01-02T03:04:05+02:00', NOW)).toBe(Date.parse('2025-01-02T01:04:05Z') * 1000);
  expect(parseTimeInput('2025-01-02T03:04:05.123456Z', NOW)).toBe(Date.parse('2025-01-02T03:04:05.123Z') * 1000 + 456);
});

test('anything else is null', () => {
  for (const bad of ['', 'yesterday', '5s', '-1h', '2h ago', '2025-13-01', '1700000000', "1d' OR 1=1"]) expect(parseTimeInput(bad, NOW)).toBeNull();
});
