export { loadConfig, configSearchPath, ConfigError, type LoadedConfig } from './load.ts';
export { configSchema, sections, type Config, type SectionName } from './schema.ts';
export { renderExample } from './example.ts';
export { renderEffectiveConfig, type EffectiveConfig } from './effective.ts';
