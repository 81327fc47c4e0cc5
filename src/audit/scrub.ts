/**
 * Keeps secrets out of audit events. Paths are stored without their query string by construction;
 * a path segment that looks like a credential (a token or API key value someone put in a URL) is
 * replaced, and detail fields are built only from path segments that passed this check.
 */

/** Prefixes of the credential values this service issues (time-series tokens, memory API keys). */
const SECRET_PREFIXES = ['svc_', 'svcm_'];
/** A long run of token characters reads as a secret even without a known prefix. */
const LONG_OPAQUE = /^[A-Za-z0-9_\-+/=.]{40,}$/;

/** Placeholder that replaces a secret. */
export const REDACTED = '[redacted]';

/** True when a path segment may be a credential value. */
export function looksSecret(segment: string): boolean {
  if (SECRET_PREFIXES.some((p) => segment.startsWith(p) && segment.length >= p.length + 16)) return true;
  return LONG_OPAQUE.test(segment);
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

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
