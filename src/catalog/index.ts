export { openCatalog, type CatalogDb } from './connection.ts';
export { migrate, type Migration } from '../lib/migrate.ts';
export { migrations } from './migrations.ts';
export { FileManifestStore, type ManifestFile } from './file-manifest-store.ts';
export { DatabaseStore, type DatabaseRecord } from './database-store.ts';
