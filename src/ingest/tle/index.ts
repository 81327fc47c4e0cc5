/** Two-line element sets (satellite orbits) -> ColumnBatch. */
export { MAX_TLE_ERRORS, parseTle, TLE_COLUMNS, TleParser, type TleError, type TleResult } from './tle-parser.ts';
export { tleChecksum } from './tle-fields.ts';
