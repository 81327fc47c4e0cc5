/** Write buffers, the flush pipeline to Parquet, and the write service every ingest route uses. */
export { BufferSet, type BufferOptions, type BufferDeps, type BufferStats } from './buffer-set.ts';
export { WriteService, type WalAppender } from './write-service.ts';
export { reconcileManifest, type ReconcileResult } from './reconcile-manifest.ts';
