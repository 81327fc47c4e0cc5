/**
 * A fixed set of connections to one instance. A query borrows one for its whole life (a DuckDB
 * connection runs one statement at a time); callers beyond the pool size wait in arrival order.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** Borrowed connections, at most `size` at once. */
export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiters: { resolve: (c: DuckDBConnection) => void; reject: (e: Error) => void }[] = [];
  private created = 0;
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    readonly size: number,
  ) {
    if (!(size >= 1)) throw new Error(`cannot create a connection pool: size must be at least 1, got ${size}`);
  }

  /** Number of connections lent out right now. */
  get inUse(): number {
    return this.created - this.idle.length;
  }

  /** Runs `fn` with a borrowed connection and returns it afterwards, also when `fn` throws. */
  async use<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = await this.acquire();
    try {
      return await fn(conn);
    } finally {
      this.release(conn);
    }
  }

  private async acquire(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error('cannot run a query: the query engine is stopped');
    const conn = this.idle.pop();
    if (conn) return conn;
    if (this.created < this.size) {
      this.created++;
      try {
        return await this.instance.connect();
      } catch (err) {
        this.created--;
        throw err;
      }
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private release(conn: DuckDBConnection): void {
    const next = this.waiters.shift();
    if (next) next.resolve(conn);
    else if (this.closed) conn.closeSync();
    else this.idle.push(conn);
  }

  /** Closes idle connections and refuses new borrowers; lent ones close when returned. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('cannot run a query: the query engine is stopped'));
    for (const c of this.idle.splice(0)) c.closeSync();
  }
}
