/**
 * Whether any memory has superseded versions (was patched). Reads add the newest-version condition
 * (a second reference to the measurement) only then: most stores never patch, and the engine cannot
 * bind a second reference to a measurement that holds nothing yet.
 */
import { MEMORY_TABLE } from './memory-sql.ts';
import type { StorageClient } from './storage-client.ts';

/** Knows, after one look at storage, whether superseded versions exist. */
export class VersionState {
  private known: Promise<boolean> | null = null;

  constructor(private readonly storage: StorageClient) {}

  /** True when some stored memory has a version above 1 (asked once, then kept up to date by `markPatched`). */
  any(): Promise<boolean> {
    if (!this.known) {
      const ask = this.storage.query(`SELECT count(*) AS n FROM ${MEMORY_TABLE} WHERE version > 1`).then((rows) => Number(rows[0]?.n ?? 0) > 0);
      this.known = ask;
      ask.catch(() => {
        if (this.known === ask) this.known = null;
      });
    }
    return this.known;
  }

  /** Called once a patched version is acknowledged by storage. */
  markPatched(): void {
    this.known = Promise.resolve(true);
  }
}
