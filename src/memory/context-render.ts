/**
 * The LLM-ready Markdown context of a session, with a hard token budget. Tokens are estimated as
 * ceil(length / 4) over the whole Markdown string (JavaScript string length, UTF-16 units, which is
 * never less than the number of characters). When the budget cuts, memories are admitted by
 * priority = 0.5 * importance + 0.5 * recency (recency: 1 for the newest candidate down to 0 for the
 * oldest, by position) until the next one would break it; the kept ones are shown in time order.
 */
import type { Memory } from './memory-record.ts';

/** Estimated tokens of a text: ceil(length / 4). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The sections in their fixed order; `session` memories get a fourth section only when present. */
const SECTIONS: { type: string; title: string; always: boolean }[] = [
  { type: 'episodic', title: 'Recent Actions', always: true },
  { type: 'decision', title: 'Decisions', always: true },
  { type: 'entity', title: 'Entities', always: true },
  { type: 'session', title: 'Session Notes', always: false },
];

/** One bullet per memory: its content on a single line (line breaks become spaces). */
export function bulletOf(content: string): string {
  return `- ${content.replace(/\s*[\r\n]+\s*/g, ' ').trim()}`;
}

/** Renders memories (already in display order) into the Markdown layout. */
export function renderContext(sessionId: string, memories: readonly Memory[]): string {
  const lines = [`# Session Context (${sessionId})`];
  for (const s of SECTIONS) {
    const items = memories.filter((m) => m.memory_type === s.type);
    if (!s.always && items.length === 0) continue;
    lines.push('', `## ${s.title} (${items.length})`);
    for (const m of items) lines.push(bulletOf(m.content));
  }
  return lines.join('\n') + '\n';
}

/** The result of fitting a context into a budget. */
export interface FittedContext {
  context: string;
  memories: Memory[];
  estimatedTokens: number;
  dropped: number;
}

/**
 * Renders the newest memories that fit in `maxTokens` (no limit when undefined). `newestFirst` is the
 * candidate list newest first; `order` is the display order inside each section. Returns null when
 * not even the empty layout fits.
 */
export function fitContext(sessionId: string, newestFirst: readonly Memory[], order: 'asc' | 'desc', maxTokens?: number): FittedContext | null {
  const display = (kept: Memory[]) => (order === 'desc' ? kept : [...kept].reverse());
  const build = (kept: Memory[]) => renderContext(sessionId, display(kept));
  if (maxTokens === undefined) {
    const context = build([...newestFirst]);
    return { context, memories: display([...newestFirst]), estimatedTokens: estimateTokens(context), dropped: 0 };
  }
  const budget = maxTokens * 4; // ceil(len / 4) <= maxTokens  <=>  len <= 4 * maxTokens
  if (build([]).length > budget) return null;
  // The rendered length grows with every memory added, so the largest prefix of the priority order
  // that fits is found by binary search over its size, each step an exact render.
  const n = newestFirst.length;
  const priority = newestFirst
    .map((m, i) => ({ i, p: 0.5 * m.importance + 0.5 * (n > 1 ? 1 - i / (n - 1) : 1) }))
    .sort((a, b) => b.p - a.p || a.i - b.i)
    .map((x) => x.i);
  const pick = (count: number) => priority.slice(0, count).sort((a, b) => a - b).map((i) => newestFirst[i]!);
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (build(pick(mid)).length <= budget) lo = mid;
    else hi = mid - 1;
  }
  const kept = pick(lo);
  const context = build(kept);
  return { context, memories: display(kept), estimatedTokens: estimateTokens(context), dropped: n - kept.length };
}
