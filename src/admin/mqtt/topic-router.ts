/**
 * Resolves where a topic's points go: the most specific `topic_mapping` entry that matches, else the
 * last topic level as the measurement. Resolutions are cached per topic, since a subscription sees the
 * same few topics over and over.
 */
import type { TopicMappingValue } from './subscription.ts';
import { filterSpecificity, topicMatches } from './topic-filter.ts';

/** Where one topic's points go. `measurement` is null when the topic offers no usable default. */
export interface TopicTarget {
  measurement: string | null;
  database: string | null;
  /** Tags taken from topic levels (position 0 = first level). */
  tags: [string, string][];
}

const MAX_CACHED_TOPICS = 10_000;

/** Turns a topic level into a measurement name: characters outside [A-Za-z0-9_-] become `_`. */
export function measurementFromLevel(level: string): string | null {
  const cleaned = level.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^-+/, '_');
  return cleaned.length === 0 ? null : cleaned.slice(0, 128);
}

/** Maps topics to targets for one subscription. */
export class TopicRouter {
  private readonly rules: { filter: string; value: TopicMappingValue }[];
  private readonly cache = new Map<string, TopicTarget>();

  constructor(mapping: Record<string, TopicMappingValue>) {
    this.rules = Object.entries(mapping)
      .map(([filter, value]) => ({ filter, value }))
      .sort((a, b) => filterSpecificity(b.filter) - filterSpecificity(a.filter));
  }

  /** The target of `topic` (cached). */
  resolve(topic: string): TopicTarget {
    let target = this.cache.get(topic);
    if (target) return target;
    target = this.compute(topic);
    if (this.cache.size >= MAX_CACHED_TOPICS) this.cache.clear();
    this.cache.set(topic, target);
    return target;
  }

  private compute(topic: string): TopicTarget {
    const levels = topic.split('/');
    const rule = this.rules.find((r) => r.filter === topic) ?? this.rules.find((r) => topicMatches(r.filter, topic));
    if (!rule) return { measurement: measurementFromLevel(levels[levels.length - 1]!), database: null, tags: [] };
    if (typeof rule.value === 'string') return { measurement: rule.value, database: null, tags: [] };
    const tags: [string, string][] = [];
    for (const t of rule.value.tags_from_topic ?? []) {
      const level = levels[t.position];
      if (level !== undefined && level !== '') tags.push([t.tag_name, level]);
    }
    return { measurement: rule.value.measurement, database: rule.value.database ?? null, tags };
  }
}
