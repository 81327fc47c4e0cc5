/** Write buffers, the flush pipeline to Parquet, and the write service every ingest route uses. */
export { BufferSet } from './buffer-set.ts';
export type { BufferOptions, BufferDeps, BufferStats } from './buffer-options.ts';
export { WriteService, type WalAppender } from './write-service.ts';
export { reconcileManifest, type ReconcileResult } from './reconcile-manifest.ts';
