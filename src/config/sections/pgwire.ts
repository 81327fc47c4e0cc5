import { z } from 'zod';
import { bool, duration, int, str } from '../fields.ts';

/** [pgwire]: the Postgres wire protocol listener. */
export const pgwireSection = z.object({
  enabled: bool(false, 'Serve the Postgres wire protocol (psql, Grafana, DBeaver); the password is an svc token'),
  host: str('0.0.0.0', 'Address the Postgres wire listener binds'),
  port: int(5433, 'Port of the Postgres wire listener (0: any free port)', 0, 65535),
  login_timeout: duration('10s', 'A connection that has not logged in this long after it opened gets FATAL 57P05 and is closed, as Postgres does with authentication_timeout (0: no limit)'),
  max_connections: int(100, 'Most open Postgres wire connections; one more is refused with SQLSTATE 53300 (too_many_connections) and closed', 1, 1_000_000),
  server_version: str('14.0', 'Postgres version reported to clients (server_version); version() adds svc\'s own'),
});
