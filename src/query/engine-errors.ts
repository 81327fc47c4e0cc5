/**
 * DuckDB errors as service errors: those the query caused (syntax, unknown column, bad cast, ...)
 * are 400 with the engine's own text; the rest are 500. Internal names (the per-query views) are
 * replaced by the names the user wrote, so the message reads in terms of their query.
 */
import { AppError, messageOf } from '../lib/errors.ts';

const CAUSED_BY_QUERY =
  /^(Parser|Binder|Catalog|Conversion|Invalid Input|Out of Range|Not implemented|Syntax|Permission|Constraint|Dependency|Invalid type|Type mismatch|Mismatch Type|Sequence|Missing Extension) Error/i;

/**
 * Maps an engine error to a 400 or a 500 AppError. `names` maps internal table names back to user
 * names; the `LINE n:` excerpt is cut (it quotes the rewritten SQL, file paths included, and its
 * caret would not point into the user's text) and the storage root never appears.
 */
export function engineError(err: unknown, names: ReadonlyMap<string, string> = new Map(), root?: string): AppError {
  if (err instanceof AppError) return err;
  let msg = messageOf(err);
  const excerpt = msg.indexOf('\n\nLINE ');
  if (excerpt >= 0) msg = msg.slice(0, excerpt);
  for (const [internal, shown] of names) msg = msg.split(internal).join(shown);
  if (root) msg = msg.split(root).join('<storage>');
  return new AppError(CAUSED_BY_QUERY.test(msg) ? 'invalid' : 'internal', msg, { cause: err });
}

/** True when DuckDB reports the statement was interrupted. */
export function isInterrupt(err: unknown): boolean {
  return /INTERRUPT Error|Interrupted/i.test(messageOf(err));
}
