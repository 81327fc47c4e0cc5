/** Request bodies of the RBAC routes (zod; unknown fields are refused). */
import { z } from 'zod';
import { PERMISSIONS } from '../token-service.ts';
import { patternProblem } from './pattern.ts';

const name = z.string().trim().min(1, 'name must not be empty').max(128);
const description = z.string().max(1024);
const pattern = z.string().superRefine((p, ctx) => {
  const problem = patternProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const permissions = z
  .array(z.enum(PERMISSIONS, { error: (i) => `unknown permission '${String(i.input)}' (use read, write or delete)` }))
  .min(1, 'permissions must name at least one of read, write, delete')
  .transform((p) => [...new Set(p)]);

export const organizationBody = z.strictObject({ name, description: description.default('') });
export const organizationPatch = z.strictObject({ name: name.optional(), description: description.optional() });
export const teamBody = organizationBody;
export const teamPatch = organizationPatch;
export const memberBody = z.strictObject({ token_id: z.string().min(1, 'token_id must not be empty') });
export const roleBody = z.strictObject({ name, database_pattern: pattern, permissions });
export const rolePatch = z.strictObject({ name: name.optional(), database_pattern: pattern.optional(), permissions: permissions.optional() });
export const grantBody = z.strictObject({ measurement_pattern: pattern, permissions });
export const grantPatch = z.strictObject({ measurement_pattern: pattern.optional(), permissions: permissions.optional() });
export const checkQuery = z.object({
  token_id: z.string({ error: 'token_id is required' }).min(1),
  database: z.string({ error: 'database is required' }).min(1),
  measurement: z.string({ error: 'measurement is required' }).min(1),
  action: z.enum(PERMISSIONS, { error: 'action must be read, write or delete' }),
});
