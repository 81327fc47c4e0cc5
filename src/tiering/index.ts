/** Tiered storage: the hot+cold store, the crash-safe mover, policies and the migration service. */
export { TieredObjectStore, type TierIndex } from './tiered-object-store.ts';
export { FileMover, MOVE_CRASH_STEPS, type MoveOutcome } from './file-mover.ts';
export { TieringStore, type TieringPolicy, type TieringJob } from './tiering-store.ts';
export { TieringService, type MigrationPlan } from './tiering-service.ts';
export { openColdStore, coldStorageSection } from './open-cold-store.ts';
export { policyBody, migrateBody, filesQuery } from './tiering-schema.ts';
