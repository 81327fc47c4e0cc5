import { describe, expect, test } from 'bun:test';
import { topicFilterProblem, topicMatches } from './topic-filter.ts';

describe('topic filters', () => {
  test('validation of wildcards', () => {
    for (const ok of ['a', 'a/b', '+', '#', 'a/+/c', 'a/#', '+/+/#', '/a']) expect(topicFilterProblem(ok)).toBeNull();
    for (const bad of ['', 'a#', 'a/#/b', 'a+/b', 'a/b+']) expect(topicFilterProblem(bad)).not.toBeNull();
  });

  test('matching', () => {
    expect(topicMatches('a/+/c', 'a/b/c')).toBe(true);
    expect(topicMatches('a/+/c', 'a/b/d')).toBe(false);
    expect(topicMatches('a/#', 'a')).toBe(true);
    expect(topicMatches('a/#', 'a/b/c')).toBe(true);
    expect(topicMatches('a/+', 'a/b/c')).toBe(false);
    expect(topicMatches('#', '$SYS/x')).toBe(false);
    expect(topicMatches('a/b', 'a/b')).toBe(true);
  });
});
