/**
 * The configuration a server actually runs with (TOML file, environment and defaults merged), as a
 * TOML file a backup carries. Secrets are left out, not encrypted: a backup is copied and kept in
 * places a key or token should not be, and the running setup supplies them (environment, TOML file,
 * secret store) again after a restore; the header names every one left out.
 */
import type { z } from 'zod';
import { metaOf } from './fields.ts';
import { sections, type Config } from './schema.ts';

/** The rendered file and the `section.key` names of the secrets it leaves out. */
export interface EffectiveConfig {
  text: string;
  secretsOmitted: string[];
}

/** Renders `config` as TOML in the form a user writes (sizes in bytes, durations in ms); secrets omitted. */
export function renderEffectiveConfig(config: Config, source: string): EffectiveConfig {
  const body: string[] = [];
  const omitted: string[] = [];
  for (const [name, schema] of Object.entries(sections)) {
    body.push(`[${name}]`);
    const values = config[name as keyof Config] as Record<string, unknown>;
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const meta = metaOf(field);
      const value = values[key];
      if (meta.secret) {
        if (value !== '' && value !== meta.default) omitted.push(`${name}.${key}`);
        continue;
      }
      body.push(`${key} = ${tomlValue(meta.kind, value)}`);
    }
    body.push('');
  }
  const head = [
    `# The effective configuration of svc (${source}), written by a backup. Environment variables`,
    '# SVC_SECTION_KEY still win over this file. Secrets are not included; set them again:',
    `# ${omitted.length ? omitted.join(', ') : '(none were set)'}`,
    '',
  ];
  return { text: [...head, ...body].join('\n'), secretsOmitted: omitted };
}

function tomlValue(kind: string, value: unknown): string {
  if (kind === 'size') return JSON.stringify(`${value as number}B`);
  if (kind === 'duration') return JSON.stringify(`${value as number}ms`);
  return JSON.stringify(value);
}
