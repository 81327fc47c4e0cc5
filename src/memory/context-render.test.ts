import { describe, expect, test } from 'bun:test';
import { estimateTokens, fitContext, renderContext } from './context-render.ts';
import type { Memory } from './memory-record.ts';

const mem = (content: string, memory_type = 'episodic'): Memory => ({
  memory_id: content, time: '', org_id: 'o', agent_id: 'a', session_id: 's', memory_type, event_type: 'general',
  content, metadata: null, tags: [], importance: 0, dedup_key: content, parent_id: null, version: 1, updated_at: '', expires_at: null,
});

describe('context rendering', () => {
  test('layout: heading, three fixed sections with counts, session notes only when present', () => {
    expect(renderContext('s1', [mem('did a'), mem('why b', 'decision')])).toBe(
      '# Session Context (s1)\n\n## Recent Actions (1)\n- did a\n\n## Decisions (1)\n- why b\n\n## Entities (0)\n',
    );
    expect(renderContext('s1', [mem('line one\r\n  line two', 'session')])).toContain('## Session Notes (1)\n- line one line two\n');
  });

  test('max_tokens: never exceeded, the newest kept as a run, the oldest dropped', () => {
    const newestFirst = Array.from({ length: 50 }, (_, i) => mem(`memory number ${49 - i} ${'x'.repeat(i % 7)}`));
    for (let max = 30; max < 400; max += 7) {
      const r = fitContext('s1', newestFirst, 'desc', max)!;
      expect(estimateTokens(r.context)).toBeLessThanOrEqual(max);
      expect(r.memories).toEqual(newestFirst.slice(0, r.memories.length));
      const next = newestFirst.slice(0, r.memories.length + 1);
      if (r.dropped > 0) expect(estimateTokens(renderContext('s1', next))).toBeGreaterThan(max);
    }
    expect(fitContext('s1', newestFirst, 'desc', 10)).toBeNull();
    expect(fitContext('s1', newestFirst, 'desc')!.memories.length).toBe(50);
  });

  test('max_tokens: an important old memory outlives newer unimportant ones', () => {
    const newestFirst = [mem('new one'), mem('new two'), mem('new three'), { ...mem('the old but vital fact'), importance: 1 }];
    const all = fitContext('s1', newestFirst, 'desc')!;
    const r = fitContext('s1', newestFirst, 'desc', estimateTokens(all.context) - 3)!;
    expect(r.dropped).toBeGreaterThan(0);
    expect(r.memories.map((m) => m.content)).toContain('the old but vital fact');
    expect(r.memories.map((m) => m.content)).toContain('new one');
  });

  test('order asc shows the kept memories oldest first', () => {
    const r = fitContext('s', [mem('new'), mem('mid'), mem('old')], 'asc', 1000)!;
    expect(r.context).toContain('- old\n- mid\n- new\n');
  });
});
