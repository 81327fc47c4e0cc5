/**
 * Keeps secrets out of audit events and log lines: one set of rules for what looks like a credential
 * (a token or API key value), applied to URL path segments (audit) and to free text and structured
 * fields (the logger's sink). It lives in lib/ so the logger, below every other layer, can use it.
 */

/** Prefixes of the credential values this service issues (time-series tokens, memory API keys). */
const SECRET_PREFIXES = ['svc_', 'svcm_'];
/** A long run of token characters reads as a secret even without a known prefix. */
const LONG_OPAQUE = /^[A-Za-z0-9_\-+/=.]{40,}$/;
/**
 * Candidate words of free text: runs of base64url characters (every credential svc issues is one)
 * long enough to be one. `/`, `.`, `=` and `+` end a run, so a file path or a dotted name
 * is judged piece by piece and `p=<token>` still shows its token's prefix.
 */
const TEXT_CANDIDATE = /[A-Za-z0-9_-]{20,}/g;

/** Placeholder that replaces a secret. */
export const REDACTED = '[redacted]';

/** True when a path segment (or a user name) may be a credential value. */
export function looksSecret(segment: string): boolean {
  return hasSecretPrefix(segment) || LONG_OPAQUE.test(segment);
}

const hasSecretPrefix = (word: string) => SECRET_PREFIXES.some((p) => word.startsWith(p) && word.length >= p.length + 16);

/**
 * looksSecret for a word of free text, which also holds long names (`<measurement>_<time>_<nanos>`
 * file names, snake_case identifiers): without a known prefix, a long run counts only when it mixes
 * upper case, lower case and digits, as random secrets of that length always do.
 */
function looksSecretInText(word: string): boolean {
  return hasSecretPrefix(word) || (LONG_OPAQUE.test(word) && /[A-Z]/.test(word) && /[a-z]/.test(word) && /\d/.test(word));
}

/** The path with any query string dropped and secret-looking segments replaced. */
export function scrubPath(path: string): string {
  const q = path.indexOf('?');
  const bare = q >= 0 ? path.slice(0, q) : path;
  return bare
    .split('/')
    .map((s) => (looksSecret(safeDecode(s)) ? REDACTED : s))
    .join('/');
}

/** `text` with every word that may be a credential replaced (error messages, log lines). */
export function scrubText(text: string): string {
  if (text.length < 20) return text;
  return text.replace(TEXT_CANDIDATE, (word) => (looksSecretInText(word) ? REDACTED : word));
}

/** A copy of `value` with scrubText applied to every string in it (arrays and plain objects walked; depth-bounded). */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  if (value instanceof Error) return scrubText(value.message);
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, depth + 1);
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
