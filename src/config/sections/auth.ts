import { z } from 'zod';
import { bool, int, str } from '../fields.ts';

/** [auth]: API tokens and the metadata database that holds them. */
export const authSection = z.object({
  enabled: bool(true, 'Require a token on every non-public route'),
  db_path: str('./data/svc.db', 'SQLite metadata database (tokens, databases, file manifest, policies)'),
  cache_ttl: int(30, 'Seconds a validated token stays cached'),
  max_cache_size: int(1000, 'Most tokens kept in the validation cache', 1),
});
