/** The Postgres wire protocol door into the query engine (psql, Grafana, DBeaver, the `pg` client). */
export { startPgWire, type PgWireOptions } from './pgwire-server.ts';
export type { SessionDeps } from './session.ts';
