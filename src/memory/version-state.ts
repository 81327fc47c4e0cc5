/**
 * Whether any memory has superseded versions (was patched). Reads add the newest-version condition
 * (a second reference to the measurement) only then: most stores never patch, and the engine cannot
 * bind a second reference to a measurement that holds nothing yet.
 *
 * The first look also upgrades the storage layout: memories written before versions existed have no
 * `version`, `expires_at` or `updated_at` column, and a query naming a column no file has fails. One
 * row of the organization '' (no key belongs to it, so no read ever shows it) gives the measurement
 * those columns; older rows read them as NULL.
 */
import { MEMORY_TABLE } from './memory-sql.ts';
import type { StorageClient } from './storage-client.ts';

/** Columns added by memory versions. */
const V2_COLUMNS = ['version', 'expires_at', 'updated_at'] as const;

/** Knows, after one look at storage, whether superseded versions exist. */
export class VersionState {
  private known: Promise<boolean> | null = null;

  constructor(private readonly storage: StorageClient) {}

  /** True when some stored memory has a version above 1 (asked once, then kept up to date by `markPatched`). */
  any(): Promise<boolean> {
    if (!this.known) {
      const ask = this.upgradeLayout()
        .then(() => this.storage.query(`SELECT count(*) AS n FROM ${MEMORY_TABLE} WHERE version > 1`))
        .then((rows) => Number(rows[0]?.n ?? 0) > 0);
      this.known = ask;
      ask.catch(() => {
        if (this.known === ask) this.known = null;
      });
    }
    return this.known;
  }

  private async upgradeLayout(): Promise<void> {
    const columns = await this.storage.columns(MEMORY_TABLE);
    if (!columns.includes('memory_id') || V2_COLUMNS.every((c) => columns.includes(c))) return;
    const str = (name: string, value: string) => ({ name, kind: 'string' as const, values: [value] });
    await this.storage.write(MEMORY_TABLE, [
      { name: 'time', kind: 'int', values: [0] },
      str('memory_id', 'layout_v2'),
      ...['org_id', 'agent_id', 'session_id', 'memory_type', 'event_type', 'content', 'metadata', 'tags', 'dedup_key', 'parent_id'].map((c) => str(c, '')),
      { name: 'importance', kind: 'float', values: [0] },
      ...V2_COLUMNS.map((name) => ({ name, kind: 'int' as const, values: [name === 'version' ? 1 : 0] })),
    ]);
  }

  /** Called once a patched version is acknowledged by storage. */
  markPatched(): void {
    this.known = Promise.resolve(true);
  }
}
