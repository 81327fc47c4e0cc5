import { z } from 'zod';

/**
 * A query parameter holding a whole number within [min, max]; any other text fails with one message that
 * names the range (z.coerce would turn `abc` into NaN and `""` into 0, with less helpful messages).
 */
export function wholeNumberParam(min: number, max: number, unit?: string) {
  const message = `must be a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\s*\d+\s*$/, message)
    .transform(Number)
    .pipe(z.number().min(min, message).max(max, message));
}
