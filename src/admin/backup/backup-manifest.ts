/** manifest.json of a backup: what it holds, per database and measurement, and every data file. */
import type { ManifestFile } from '../../catalog/index.ts';

/** One data file as the backup keeps it (enough to register it again without reading it). */
export interface BackupFile {
  path: string;
  database: string;
  measurement: string;
  hour: number;
  min_time: number;
  max_time: number;
  rows: number;
  bytes: number;
  columns: string[];
  seq: number;
  /** `cold` when the file lived in the cold tier (tiering); absent: hot. */
  tier?: 'cold';
}

/** Per-measurement totals. */
export interface MeasurementSummary {
  name: string;
  file_count: number;
  total_bytes: number;
  rows: number;
}

/** Per-database totals. */
export interface DatabaseSummary {
  name: string;
  file_count: number;
  total_bytes: number;
  measurements: MeasurementSummary[];
}

/** The whole manifest.json. */
export interface BackupManifest {
  backup_id: string;
  version: string;
  format: 1;
  created_at: string;
  completed_at: string;
  storage_backend: string;
  total_files: number;
  total_bytes: number;
  databases: DatabaseSummary[];
  metadata: { file: string; bytes: number; secret_key: boolean } | null;
  config: { file: string; source: string; bytes: number } | null;
  /** The configuration the server ran with (file, environment, defaults), secrets left out; absent in older backups. */
  effective_config?: { file: string; bytes: number; secrets_omitted: string[] } | null;
  files: BackupFile[];
}

/** A manifest without its file list (the backup listing). */
export type BackupSummary = Omit<BackupManifest, 'files'>;

/** The backup form of a manifest entry. */
export function toBackupFile(f: ManifestFile, bytes = f.bytes): BackupFile {
  return { path: f.path, database: f.database, measurement: f.measurement, hour: f.hour, min_time: f.minTime, max_time: f.maxTime, rows: f.rows, bytes, columns: f.columns, seq: f.seq, ...(f.tier === 'cold' ? { tier: 'cold' as const } : {}) };
}

/** The manifest entry of a restored file. */
export function fromBackupFile(f: BackupFile): ManifestFile {
  return { path: f.path, database: f.database, measurement: f.measurement, hour: f.hour, minTime: f.min_time, maxTime: f.max_time, rows: f.rows, bytes: f.bytes, columns: f.columns, seq: f.seq, createdAt: new Date().toISOString(), tier: f.tier ?? 'hot' };
}

/** Totals per database and measurement. */
export function summarize(files: readonly BackupFile[]): DatabaseSummary[] {
  const dbs = new Map<string, Map<string, MeasurementSummary>>();
  for (const f of files) {
    let ms = dbs.get(f.database);
    if (!ms) dbs.set(f.database, (ms = new Map()));
    let m = ms.get(f.measurement);
    if (!m) ms.set(f.measurement, (m = { name: f.measurement, file_count: 0, total_bytes: 0, rows: 0 }));
    m.file_count++;
    m.total_bytes += f.bytes;
    m.rows += f.rows;
  }
  return [...dbs.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, ms]) => {
      const measurements = [...ms.values()].sort((a, b) => a.name.localeCompare(b.name));
      return { name, file_count: measurements.reduce((n, m) => n + m.file_count, 0), total_bytes: measurements.reduce((n, m) => n + m.total_bytes, 0), measurements };
    });
}

/** The listing form of a manifest. */
export function summaryOf(m: BackupManifest): BackupSummary {
  const { files: _files, ...rest } = m;
  return rest;
}
