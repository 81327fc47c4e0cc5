/**
 * The C sources of this folder as text: imported so, they are part of the single executable
 * (build.ts bundles them like any module) and need no file next to it.
 */
import duckdbChunks from './duckdb-chunks.c' with { type: 'text' };
import jsonRows from './json-rows.c' with { type: 'text' };
import snappy from './snappy.c' with { type: 'text' };
import strings from './strings.c' with { type: 'text' };

export const C_SOURCES = { 'duckdb-chunks': duckdbChunks, 'json-rows': jsonRows, snappy, strings } as const;
