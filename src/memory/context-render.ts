/**
 * The LLM-ready Markdown context of a session, with a hard token budget. Tokens are estimated as
 * ceil(length / 4) over the whole Markdown string (JavaScript string length, UTF-16 units, which is
 * never less than the number of characters). Memories are admitted newest first until the next one
 * would break the budget; so the oldest are dropped first, and the newest are always kept as a run.
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
  // The rendered length grows with every memory added, so the largest newest run that fits is found
  // by binary search over its size, each step an exact render.
  let lo = 0;
  let hi = newestFirst.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (build(newestFirst.slice(0, mid)).length <= budget) lo = mid;
    else hi = mid - 1;
  }
  const kept = newestFirst.slice(0, lo);
  const context = build(kept);
  return { context, memories: display(kept), estimatedTokens: estimateTokens(context), dropped: newestFirst.length - kept.length };
}
