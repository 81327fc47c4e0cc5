/** The audit log: event shape, bounded queue with batch writer, SQLite store; secrets scrubbed by lib/scrub.ts's rules. */
export { AuditLog, AUDIT_QUEUE_SIZE, type AuditStats } from './audit-log.ts';
export { looksSecret, REDACTED } from '../lib/scrub.ts';
export { SqliteAuditStore, type AuditFilter, type AuditStore } from './audit-store.ts';
export type { AuditEvent, AuditRequest } from './audit-event.ts';
