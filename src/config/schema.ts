import { z } from 'zod';
import { serverSection } from './sections/server.ts';
import { authSection } from './sections/auth.ts';
import { rbacSection } from './sections/rbac.ts';
import { storageSection } from './sections/storage.ts';
import { ingestSection } from './sections/ingest.ts';
import { walSection } from './sections/wal.ts';
import { auditLogSection, governanceSection, queryManagementSection } from './sections/governance.ts';
import { clusterSection } from './sections/cluster.ts';
import { consoleSection } from './sections/console.ts';
import { databaseSection, querySection } from './sections/query.ts';
import { pgwireSection } from './sections/pgwire.ts';
import { tieringSection } from './sections/tiering.ts';
import {
  backupSection,
  compactionSection,
  continuousQueriesSection,
  deleteSection,
  logSection,
  memorySection,
  metricsSection,
  mqttSection,
  retentionSection,
} from './sections/lifecycle.ts';

/** Every TOML section, in the order the example file lists them. */
export const sections = {
  server: serverSection,
  auth: authSection,
  rbac: rbacSection,
  storage: storageSection,
  ingest: ingestSection,
  wal: walSection,
  query: querySection,
  database: databaseSection,
  delete: deleteSection,
  retention: retentionSection,
  continuous_queries: continuousQueriesSection,
  compaction: compactionSection,
  backup: backupSection,
  mqtt: mqttSection,
  metrics: metricsSection,
  log: logSection,
  memory: memorySection,
  query_management: queryManagementSection,
  governance: governanceSection,
  audit_log: auditLogSection,
  cluster: clusterSection,
  console: consoleSection,
  pgwire: pgwireSection,
  tiering: tieringSection,
} as const;

export type SectionName = keyof typeof sections;

/** The whole configuration schema; each section defaults to its fields' defaults. */
export const configSchema = z.object({
  server: serverSection.prefault({}),
  auth: authSection.prefault({}),
  rbac: rbacSection.prefault({}),
  storage: storageSection.prefault({}),
  ingest: ingestSection.prefault({}),
  wal: walSection.prefault({}),
  query: querySection.prefault({}),
  database: databaseSection.prefault({}),
  delete: deleteSection.prefault({}),
  retention: retentionSection.prefault({}),
  continuous_queries: continuousQueriesSection.prefault({}),
  compaction: compactionSection.prefault({}),
  backup: backupSection.prefault({}),
  mqtt: mqttSection.prefault({}),
  metrics: metricsSection.prefault({}),
  log: logSection.prefault({}),
  memory: memorySection.prefault({}),
  query_management: queryManagementSection.prefault({}),
  governance: governanceSection.prefault({}),
  audit_log: auditLogSection.prefault({}),
  cluster: clusterSection.prefault({}),
  console: consoleSection.prefault({}),
  pgwire: pgwireSection.prefault({}),
  tiering: tieringSection.prefault({}),
});

/** The parsed configuration: sizes in bytes, durations in milliseconds. */
export type Config = z.output<typeof configSchema>;
