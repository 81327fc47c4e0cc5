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
  private readonly known = new Set<string>();

  constructor(
    private readonly svc: SvcFetch,
    private readonly database: string,
  ) {}

  /** Writes one columnar batch; resolves once the service acknowledged it (visible to queries from then on). */
  async write(measurement: string, columns: readonly EncodedColumn[]): Promise<void> {
    const res = await this.call('/api/v1/write/msgpack', 'application/msgpack', encodeColumnar(measurement, columns), 'write memories');
    await res.body?.cancel();
  }

  /**
   * Runs one SELECT over `measurement` and returns its rows as objects. A measurement that does not
   * exist yet has no rows: when the engine refuses the query, the public measurement listing decides.
   */
  async query(measurement: string, sql: string): Promise<Row[]> {
    let res: Response;
    try {
      res = await this.call('/api/v1/query', 'application/json', JSON.stringify({ sql, format: 'json' }), 'query memories');
    } catch (err) {
      if (err instanceof AppError && err.kind === 'internal' && !(await this.measurementExists(measurement))) return [];
      throw err;
    }
    const body = (await res.json()) as { columns?: string[]; data?: unknown[][] };
    const cols = body.columns ?? [];
    return (body.data ?? []).map((row) => {
      const o: Row = {};
      for (let i = 0; i < cols.length; i++) o[cols[i]!] = row[i];
      return o;
    });
  }

  /** True unless the service says the measurement (or its database) does not exist; once seen, remembered. */
  private async measurementExists(measurement: string): Promise<boolean> {
    if (this.known.has(measurement)) return true;
    const res = await this.svc(new Request(`http://svc/api/v1/databases/${encodeURIComponent(this.database)}/measurements`)).catch(() => null);
    if (res?.status === 404) return false;
    if (!res?.ok) return true;
    const body = (await res.json()) as { measurements?: { name: string }[] };
    const exists = (body.measurements ?? []).some((m) => m.name === measurement);
    if (exists) this.known.add(measurement);
    return exists;
  }

  /** True when the time-series service answers its health check. */
  async ping(): Promise<boolean> {
    const res = await this.svc(new Request('http://svc/health')).catch(() => null);
    return res?.ok ?? false;
  }

  private async call(path: string, contentType: string, body: string | Uint8Array, what: string): Promise<Response> {
    const req = new Request(`http://svc${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-svc-database': this.database },
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
    const kind = res.status === 503 || res.status === 502 || res.status === 504 ? 'unavailable' : 'internal';
    throw new AppError(kind, `cannot ${what}: time-series service answered ${res.status}: ${detail.slice(0, 500)}`);
  }
}
