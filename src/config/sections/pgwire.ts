import { z } from 'zod';
import { bool, int, str } from '../fields.ts';

/** [pgwire]: the Postgres wire protocol listener. */
export const pgwireSection = z.object({
  enabled: bool(false, 'Serve the Postgres wire protocol (psql, Grafana, DBeaver); the password is an svc token'),
  host: str('0.0.0.0', 'Address the Postgres wire listener binds'),
  port: int(5433, 'Port of the Postgres wire listener (0: any free port)', 0, 65535),
  server_version: str('14.0', 'Postgres version reported to clients (server_version); version() adds svc\'s own'),
});
