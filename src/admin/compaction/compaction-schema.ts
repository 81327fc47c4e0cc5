/** Request shapes of the compaction routes. */
import { z } from 'zod';

/** Body of POST /trigger, /hourly, /daily: optional scope. */
export const triggerBody = z.object({
  database: z.string().min(1).optional(),
  measurement: z.string().min(1).optional(),
});

/** Query of GET /candidates. */
export const candidatesQuery = triggerBody;

/** Query of GET /history: `limit` 1-1000, default 50. */
export const historyQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});
