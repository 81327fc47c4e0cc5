/** File imports staged as DuckDB tables: column typing, time conversion, validation. */
export { ident, literal, planColumn, planColumns, type PlannedColumn, type SourceColumn, type StagedColumn } from './column-plan.ts';
export { stageTable, type StagedTable, type StageSource } from './stage-table.ts';
export { epochUnitOf, MAX_TIME_MICROS, TIME_FORMATS, timeExpression, timeKindOf, type TimeFormat, type TimeKind } from './time-expression.ts';
