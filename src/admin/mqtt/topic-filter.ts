/** MQTT topic filters: validation and matching of topics against `+` and `#` wildcards. */

/** Why `filter` is not a valid MQTT topic filter, or null when it is. */
export function topicFilterProblem(filter: string): string | null {
  if (filter.length === 0) return 'must not be empty';
  if (Buffer.byteLength(filter) > 65535) return 'is longer than 65535 bytes';
  if (filter.includes('\u0000')) return 'must not contain NUL characters';
  const levels = filter.split('/');
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return "'#' must be a whole level and the last one";
    if (level.includes('+') && level !== '+') return "'+' must be a whole level";
  }
  return null;
}

/** True when `topic` (no wildcards) matches `filter` by MQTT rules; `$`-topics never match a leading wildcard. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (topic.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true; // also matches the parent level: `a/#` matches `a`
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Specificity of a filter, for choosing among several matches: literal levels count most, `#` least. */
export function filterSpecificity(filter: string): number {
  let score = 0;
  for (const level of filter.split('/')) score += level === '#' ? 0 : level === '+' ? 1 : 1000;
  return score;
}
