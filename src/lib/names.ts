import { invalid } from './errors.ts';

const DATABASE_RE = /^[A-Za-z][A-Za-z0-9_-]*$/;
const RESERVED_DATABASES = new Set(['system', 'internal', '_internal']);
/** Measurement and column names become path segments and SQL identifiers: no separators, no dots, no control chars. */
const MEASUREMENT_RE = /^[A-Za-z0-9_][A-Za-z0-9_\-]*$/;
const MAX_NAME = 64;
const MAX_MEASUREMENT = 128;

export const DATABASE_NAME_RULE =
  'must start with a letter and contain only alphanumeric characters, underscores, or hyphens';

/** Why `name` is not a valid database name, or null when it is. */
export function databaseNameProblem(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'database name is required';
  if (name.length > MAX_NAME) return `invalid database name '${name.slice(0, 80)}': at most ${MAX_NAME} characters`;
  if (!DATABASE_RE.test(name)) return `invalid database name '${name}': ${DATABASE_NAME_RULE}`;
  if (RESERVED_DATABASES.has(name.toLowerCase())) return `invalid database name '${name}': the name is reserved`;
  return null;
}

/** Throws a 400 AppError unless `name` follows the spec's database name rules. */
export function assertDatabaseName(name: string): string {
  const problem = databaseNameProblem(name);
  if (problem) throw invalid(problem);
  return name;
}

/** Why `name` is not a valid measurement name (it becomes a folder and a file-name prefix), or null. */
export function measurementNameProblem(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'measurement name is required';
  if (name.length > MAX_MEASUREMENT) return `invalid measurement name '${name.slice(0, 80)}': at most ${MAX_MEASUREMENT} characters`;
  if (!MEASUREMENT_RE.test(name))
    return `invalid measurement name '${name}': use letters, digits, underscores or hyphens, not starting with a hyphen`;
  return null;
}

/** Throws a 400 AppError unless `name` is safe as a measurement folder name. */
export function assertMeasurementName(name: string): string {
  const problem = measurementNameProblem(name);
  if (problem) throw invalid(problem);
  return name;
}

/** Why `name` is not a valid column name, or null. Columns are quoted in SQL, so only emptiness, length and control characters matter. */
export function columnNameProblem(name: string): string | null {
  if (name.length === 0) return 'column name must not be empty';
  if (name.length > 256) return `column name '${name.slice(0, 40)}…' is longer than 256 characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(name)) return `column name '${JSON.stringify(name)}' contains control characters`;
  return null;
}
