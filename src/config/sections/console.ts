import { z } from 'zod';
import { bool } from '../fields.ts';

/** [console]: the built-in web console on the time-series port. */
export const consoleSection = z.object({
  enabled: bool(true, 'Serve the web console at GET /console (and redirect browsers from GET /)'),
});
