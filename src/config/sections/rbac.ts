import { z } from 'zod';
import { bool } from '../fields.ts';

/** [rbac]: organizations, teams, roles and measurement permissions that narrow a token's rights. */
export const rbacSection = z.object({
  enabled: bool(true, 'Apply roles of a token\'s teams (no license needed); a token in no team keeps its own permissions'),
});
