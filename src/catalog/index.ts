export { openCatalog, type CatalogDb } from './connection.ts';
export { migrate, type Migration } from '../lib/migrate.ts';
export { migrations } from './migrations.ts';
export { ChangeHandedOn, FileManifestStore, type FileTier, type ManifestFile, type ManifestJournal, type Placement } from './file-manifest-store.ts';
export { DatabaseStore, type DatabaseRecord } from './database-store.ts';
export { ReplicationStore, type ReplicatedTable, type OutboxEntry, type Row as ReplicatedRow } from './replication-store.ts';
