import { describe, expect, test } from 'bun:test';
import type { ManifestFile } from '../catalog/index.ts';
import type { Op } from './etcd/etcd-client.ts';
import { intentWrites, planIntent } from './flush-intent.ts';

const file = (i: number, columns = 5): ManifestFile => ({
  path: `db/m/2024/07/01/${String(i).padStart(5, '0')}/f.parquet`,
  database: 'db',
  measurement: 'm',
  hour: i * 3_600_000_000,
  minTime: i * 3_600_000_000,
  maxTime: i * 3_600_000_000 + 1,
  rows: 3,
  bytes: 1000,
  columns: Array.from({ length: columns }, (_, c) => `column_with_a_long_name_${c}`),
  seq: 7,
  createdAt: '2024-07-01T00:00:00.000Z',
  tier: 'hot',
  movedAt: null,
});
const putOf = (op: Op | undefined) => (op && 'put' in op ? op.put : { key: '', value: '' });
const bytesOf = (ops: Op[]) => ops.reduce((n, op) => n + putOf(op).value.length, 0);

describe('flush intents', () => {
  test('a backfill of 5,000 wide hour-files: parts of at most 100 files and 256 KiB, writes under 1 MiB, the head last', () => {
    const added = Array.from({ length: 5000 }, (_, i) => file(i, 200));
    const coverage = [{ key: '/p/wal/covered/x', value: '{"segments":{"s":[0]}}' }];
    const intent = planIntent('/p', [], added, coverage);
    expect(intent.parts.flatMap((p) => p.added.map((f) => f.path))).toEqual(added.map((f) => f.path));
    for (const p of intent.parts) {
      expect(p.added.length).toBeLessThanOrEqual(100);
      expect(JSON.stringify(p.added).length).toBeLessThanOrEqual(256 * 1024 + 8 * 1024);
    }
    const writes = intentWrites(intent);
    expect(writes.length).toBeGreaterThan(1);
    for (const ops of writes) {
      expect(ops.length).toBeLessThanOrEqual(100);
      expect(bytesOf(ops)).toBeLessThanOrEqual(1024 * 1024);
    }
    const keys = writes.flat().map((op) => putOf(op).key);
    expect(keys.at(-1)).toBe(intent.head);
    expect(keys.slice(0, -1)).toEqual(intent.parts.map((p) => p.key));
    expect(JSON.parse(putOf(writes.at(-1)?.at(-1)).value)).toMatchObject({ parts: intent.parts.length, coverage });
  });

  test('removals come before registrations, each part one kind', () => {
    const intent = planIntent('/p', ['a', 'b'], [file(1)], []);
    expect(intent.parts.map((p) => [p.removed, p.added.length])).toEqual([
      [['a', 'b'], 0],
      [[], 1],
    ]);
  });
});
