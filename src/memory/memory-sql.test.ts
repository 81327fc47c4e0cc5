import { describe, expect, test } from 'bun:test';
import { dedupSql, selectMemoriesSql, statsSql, whereClause } from './memory-sql.ts';

describe('memory SQL', () => {
  test('every query is scoped by org_id', () => {
    expect(whereClause({ orgId: 'default' })).toBe("org_id = 'default'");
    expect(whereClause({ orgId: 'default', latestOnly: true })).toBe(
      "org_id = 'default' AND (memory_id || '#' || (coalesce(version, 1) + 1)) NOT IN (SELECT memory_id || '#' || version FROM memories WHERE version > 1)",
    );
  });

  test('metadata, parent and expiry filters', () => {
    const w = whereClause({ orgId: 'o', parentId: 'p1', metadata: { project: "o'hare", n: 3, on: true }, aliveAtUs: 42 });
    expect(w).toContain("parent_id = 'p1'");
    expect(w).toContain(`json_extract_string(nullif(metadata, ''), '$."project"') = 'o''hare'`);
    expect(w).toContain(`json_extract(nullif(metadata, ''), '$."n"') = '3'::JSON`);
    expect(w).toContain(`json_extract(nullif(metadata, ''), '$."on"') = 'true'::JSON`);
    expect(w).toContain('(coalesce(expires_at, 0) = 0 OR expires_at > 42)');
  });

  test('filters become escaped literals; tags match exactly between delimiters', () => {
    const w = whereClause({
      orgId: 'o',
      agentId: "a'b",
      memoryTypes: ['episodic', 'decision'],
      tags: ['api', "x'y"],
      contentContains: "O'Brien",
      minImportance: 0.5,
      sinceUs: 1_700_000_000_000_000,
      excludeIds: ['mem_1'],
    });
    expect(w).toContain("agent_id = 'a''b'");
    expect(w).toContain("memory_type IN ('episodic', 'decision')");
    expect(w).toContain("contains(tags, ',api,') AND contains(tags, ',x''y,')");
    expect(w).toContain("contains(lower(content), lower('O''Brien'))");
    expect(w).toContain('importance >= 0.5');
    expect(w).toContain("time >= TIMESTAMP '2023-11-14 22:13:20.000000'");
    expect(w).toContain(`memory_id NOT IN (SELECT unnest(from_json('["mem_1"]', '["VARCHAR"]')))`);
  });

  test('select orders by time then id, pages with LIMIT/OFFSET', () => {
    const sql = selectMemoriesSql({ orgId: 'o' }, { order: 'asc', limit: 11, offset: 20 });
    expect(sql).toStartWith('SELECT epoch_us(time) AS time_us, memory_id');
    expect(sql).toEndWith('ORDER BY time ASC, memory_id ASC LIMIT 11 OFFSET 20');
  });

  test('dedup and stats queries', () => {
    expect(dedupSql({ orgId: 'o', dedupKeys: ['k1', 'k2'], sinceUs: 0 })).toContain("dedup_key IN ('k1', 'k2')");
    const stats = statsSql({ orgId: 'o', agentId: 'a' }, 1_700_000_000_000_000);
    expect(stats).toContain("count(*) FILTER (WHERE time >= TIMESTAMP '2023-11-14 22:13:20.000000' AND event_type = 'error') AS errors");
    expect(stats).toEndWith('GROUP BY memory_type');
  });
});
