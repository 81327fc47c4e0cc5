/**
 * The memory service's only way to its records: the time-series service's public HTTP API through a
 * SvcFetch (in-process handler or network). Writes go to `POST /api/v1/write/msgpack`, reads to
 * `POST /api/v1/query` with the database in `x-svc-database`.
 */
import { AppError, messageOf } from '../lib/errors.ts';
import { encodeColumnar, type EncodedColumn } from './msgpack-encode.ts';
import type { SvcFetch } from './svc-client.ts';

/** A query result row keyed by column name. */
export type Row = Record<string, unknown>;

/** Writes columns and runs SELECTs against one time-series database. */
export class StorageClient {

  constructor(
    private readonly svc: SvcFetch,
    private readonly database: string,
  ) {}

  /** Writes one columnar batch; resolves once the service acknowledged it (visible to queries from then on). */
  async write(measurement: string, columns: readonly EncodedColumn[]): Promise<void> {
    const res = await this.call('/api/v1/write/msgpack', 'application/msgpack', encodeColumnar(measurement, columns), 'write memories');
    await res.body?.cancel();
  }

  /** Column names of a measurement (none while it holds nothing). */
  async columns(measurement: string): Promise<string[]> {
    const res = await this.call('/api/v1/query', 'application/json', JSON.stringify({ sql: `SELECT * FROM ${measurement} LIMIT 0`, format: 'json' }), 'read the memory layout');
    return ((await res.json()) as { columns?: string[] }).columns ?? [];
  }

  /** Runs one SELECT and returns its rows as objects (a measurement with no data yet answers zero rows). */
  async query(sql: string): Promise<Row[]> {
    const res = await this.call('/api/v1/query', 'application/json', JSON.stringify({ sql, format: 'json' }), 'query memories', { 'x-svc-query-source': 'memory' });
    const body = (await res.json()) as { columns?: string[]; data?: unknown[][] };
    const cols = body.columns ?? [];
    return (body.data ?? []).map((row) => {
      const o: Row = {};
      for (let i = 0; i < cols.length; i++) o[cols[i]!] = row[i];
      return o;
    });
  }

  /**
   * Removes the rows matching `where` from the measurement's files (`POST /api/v1/delete`): the files
   * holding them are rewritten without them. A service token (the in-process one, or a remote one's
   * `is_service` token) erases regardless of `delete.enabled`: its database is a system database it keeps.
   */
  async delete(measurement: string, where: string): Promise<number> {
    const body = JSON.stringify({ database: this.database, measurement, where, confirm: true });
    const res = await this.call('/api/v1/delete', 'application/json', body, 'purge memories');
    const out = (await res.json()) as { deleted_rows?: number; failed_files?: string[] };
    if (res.status === 207) throw new AppError('unavailable', `cannot purge memories: some storage files could not be rewritten (${(out.failed_files ?? []).join(', ')}); retry`);
    return out.deleted_rows ?? 0;
  }

  /** True when the time-series service answers its health check. */
  async ping(): Promise<boolean> {
    const res = await this.svc(new Request('http://svc/health')).catch(() => null);
    return res?.ok ?? false;
  }

  private async call(path: string, contentType: string, body: string | Uint8Array, what: string, extra: Record<string, string> = {}): Promise<Response> {
    const req = new Request(`http://svc${path}`, {
      method: 'POST',
      // x-svc-query-source marks reads as the memory service's in the query registry.
      headers: { 'content-type': contentType, 'x-svc-database': this.database, ...extra },
      body,
    });
    let res: Response;
    try {
      res = await this.svc(req);
    } catch (err) {
      throw new AppError('unavailable', `cannot ${what}: time-series service unreachable: ${messageOf(err)}`);
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let detail = text;
    try {
      detail = String((JSON.parse(text) as { error?: unknown }).error ?? text);
    } catch {
      // not JSON: keep the text
    }
    const kind = res.status === 503 || res.status === 502 || res.status === 504 ? 'unavailable' : res.status === 403 ? 'forbidden' : 'internal';
    throw new AppError(kind, `cannot ${what}: time-series service answered ${res.status}: ${detail.slice(0, 500)}`);
  }
}
