import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { configSchema, sections, type Config } from './schema.ts';
import { metaOf, type FieldMeta } from './fields.ts';

/** A configuration problem: startup prints its message on one line and exits with code 2. */
export class ConfigError extends Error {}

/** Where svc.toml is looked for when no --config is given, in order. */
export function configSearchPath(cwd = process.cwd()): string[] {
  return [join(cwd, 'svc.toml'), '/etc/svc/svc.toml', join(homedir(), '.svc', 'svc.toml')];
}

export interface LoadedConfig {
  config: Config;
  /** The file that was read, if any. */
  path: string | null;
  /** Unknown keys found in the file: a typo must not pass silently. */
  warnings: string[];
}

/** Loads config: defaults < svc.toml (search path or `explicitPath`) < SVC_SECTION_KEY env. Throws ConfigError. */
export function loadConfig(opts: { explicitPath?: string; env?: Record<string, string | undefined>; cwd?: string } = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const path = opts.explicitPath ?? configSearchPath(opts.cwd).find((p) => existsSync(p)) ?? null;
  if (opts.explicitPath && !existsSync(opts.explicitPath)) throw new ConfigError(`config file ${opts.explicitPath} does not exist`);
  const raw: Record<string, Record<string, unknown>> = {};
  const warnings: string[] = [];
  if (path) readFile(path, raw, warnings);
  applyEnv(env, raw);
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(describeIssue(result.error.issues[0]!, raw));
  return { config: result.data, path, warnings };
}

function readFile(path: string, raw: Record<string, Record<string, unknown>>, warnings: string[]): void {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`cannot parse ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  for (const [section, value] of Object.entries(doc)) {
    const schema = sections[section as keyof typeof sections];
    if (!schema || typeof value !== 'object' || value === null || Array.isArray(value)) {
      warnings.push(`unknown config section [${section}] in ${path} is ignored`);
      continue;
    }
    const known = schema.shape as Record<string, z.ZodType>;
    raw[section] = {};
    for (const [key, v] of Object.entries(value)) {
      if (!(key in known)) warnings.push(`unknown config key ${section}.${key} in ${path} is ignored`);
      else raw[section][key] = v;
    }
  }
}

/** Env wins over the file. Only known keys are looked up, so section names with underscores stay unambiguous. */
function applyEnv(env: Record<string, string | undefined>, raw: Record<string, Record<string, unknown>>): void {
  for (const [section, schema] of Object.entries(sections)) {
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const value = env[`SVC_${section}_${key}`.toUpperCase()];
      if (value === undefined) continue;
      raw[section] ??= {};
      raw[section][key] = coerceEnv(value, metaOf(field), `${section}.${key}`);
    }
  }
}

function coerceEnv(value: string, meta: FieldMeta, key: string): unknown {
  const v = value.trim();
  switch (meta.kind) {
    case 'bool':
      if (/^(1|true|yes|on)$/i.test(v)) return true;
      if (/^(0|false|no|off)$/i.test(v)) return false;
      throw new ConfigError(`invalid value for ${key} (env SVC_${key.replace('.', '_').toUpperCase()}): '${value}': must be true or false`);
    case 'int':
    case 'number':
      return v === '' || Number.isNaN(Number(v)) ? v : Number(v);
    case 'list':
      return v === '' ? [] : v.split(',').map((s) => s.trim());
    default:
      return value;
  }
}

const KIND_PHRASE: Record<string, string> = {
  int: 'must be a whole number',
  number: 'must be a number',
  string: 'must be a string',
  list: 'must be a list of strings',
  duration: 'must be a duration such as 30s, 5m, 2h or 1d',
};

function describeIssue(issue: z.core.$ZodIssue, raw: Record<string, Record<string, unknown>>): string {
  const [section, key] = issue.path as string[];
  const name = key === undefined ? String(section) : `${section}.${key}`;
  const given = section && key ? raw[section]?.[key] : undefined;
  const field = section && key ? (sections[section as keyof typeof sections]?.shape as Record<string, z.ZodType> | undefined)?.[key] : undefined;
  const meta = field ? metaOf(field) : undefined;
  let allowed = issue.message;
  if (meta?.kind === 'enum') allowed = `must be one of ${(meta.values as string[]).join(', ')}`;
  else if (meta?.kind === 'bool') allowed = 'must be true or false';
  else if (issue.code === 'invalid_type') allowed = KIND_PHRASE[meta?.kind ?? ''] ?? `must be ${issue.expected}`;
  return `invalid config ${name} = ${JSON.stringify(given)}: ${allowed}`;
}
