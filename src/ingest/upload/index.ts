/** Uploads to local files (multipart, gzip/zstd, size caps) and reading them back line-aligned. */
export { multipartBoundary, multipartPart } from './multipart.ts';
export { spoolToFile, type SpoolOptions, type SpoolResult } from './spool.ts';
export { lineChunks, type LineChunk } from './line-chunks.ts';
