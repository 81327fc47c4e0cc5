/** Name patterns of roles and measurement permissions: name characters and `*` (any run of characters). */

/** Allowed: the characters of database and measurement names, plus `*`. */
const PATTERN_RE = /^[A-Za-z0-9_\-*]{1,128}$/;

/** Why `p` is not a valid pattern, or null. */
export function patternProblem(p: string): string | null {
  if (PATTERN_RE.test(p)) return null;
  return `invalid pattern '${p.slice(0, 80)}': use letters, digits, '_', '-' and '*' (any characters) only, at most 128 characters`;
}

/** Tests one name against a pattern. */
export type Matcher = (name: string) => boolean;

/** A matcher for a valid pattern: exact comparison without `*`, else an anchored expression. */
export function compilePattern(p: string): Matcher {
  if (p === '*') return () => true;
  if (!p.includes('*')) return (name) => name === p;
  // Only [A-Za-z0-9_-] besides '*' (validated), none of them special in a regular expression.
  const re = new RegExp(`^${p.split('*').join('.*')}$`, 's');
  return (name) => re.test(name);
}
