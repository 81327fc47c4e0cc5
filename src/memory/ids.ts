import { randomId } from '../lib/crypto.ts';

/**
 * Identifiers (agent_id, session_id, parent_id, memory_id, key ids): 1-128 characters of letters,
 * digits and `_ . : @ -`, starting with a letter or digit. They appear in URLs and SQL; the rule keeps
 * them printable and unambiguous (SQL literals are escaped regardless).
 */
export const ID_RULE = 'must be 1-128 characters: letters, digits, _ . : @ - (starting with a letter or digit)';
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;

/** True when `text` follows the identifier rule. */
export function isValidId(text: string): boolean {
  return ID_RE.test(text);
}

/** A new random identifier with a kind prefix, e.g. `mem_3f9a...` (80 random bits). */
export function newId(prefix: 'mem' | 'agt' | 'ses' | 'key'): string {
  return `${prefix}_${randomId(10)}`;
}
