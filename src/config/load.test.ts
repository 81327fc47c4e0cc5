import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, renderExample } from './index.ts';

function dirWith(toml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  writeFileSync(join(dir, 'svc.toml'), toml);
  return dir;
}

describe('loadConfig', () => {
  test('defaults when no file exists', () => {
    const { config, path } = loadConfig({ env: {}, cwd: mkdtempSync(join(tmpdir(), 'svc-empty-')), explicitPath: undefined });
    // /etc/svc or ~/.svc may not exist on CI; the defaults are what we check.
    if (path === null) {
      expect(config.server.port).toBe(8000);
      expect(config.server.host).toBe('0.0.0.0');
      expect(config.memory.port).toBe(9100);
      expect(config.storage.local_path).toBe('./data/svc');
      expect(config.auth.db_path).toBe('./data/svc.db');
      expect(config.server.max_payload_size).toBe(1024 ** 3);
      expect(config.query.timeout).toBe(300_000);
      expect(config.auth.cache_ttl).toBe(30);
      expect(config.wal.enabled).toBe(false);
      expect(config.ingest.compression).toBe('snappy');
    }
  });

  test('file beats defaults, env beats file', () => {
    const dir = dirWith('[server]\nport = 9001\nhost = "127.0.0.1"\n[ingest]\nmax_buffer_size = 5\n');
    const fromFile = loadConfig({ cwd: dir, env: {} });
    expect(fromFile.path).toBe(join(dir, 'svc.toml'));
    expect(fromFile.config.server.port).toBe(9001);
    expect(fromFile.config.ingest.max_buffer_size).toBe(5);
    const withEnv = loadConfig({ cwd: dir, env: { SVC_SERVER_PORT: '9002', SVC_CONTINUOUS_QUERIES_ENABLED: 'false', SVC_WAL_ENABLED: 'on' } });
    expect(withEnv.config.server.port).toBe(9002);
    expect(withEnv.config.server.host).toBe('127.0.0.1');
    expect(withEnv.config.continuous_queries.enabled).toBe(false);
    expect(withEnv.config.wal.enabled).toBe(true);
  });

  test('--config path overrides the search path and must exist', () => {
    const dir = dirWith('[server]\nport = 1\n');
    const other = dirWith('[server]\nport = 2\n');
    expect(loadConfig({ cwd: dir, explicitPath: join(other, 'svc.toml'), env: {} }).config.server.port).toBe(2);
    expect(() => loadConfig({ explicitPath: join(other, 'missing.toml'), env: {} })).toThrow(/does not exist/);
  });

  test('sizes and durations take units', () => {
    const dir = dirWith('[server]\nmax_payload_size = "512MB"\nshutdown_timeout = "2m"\n[query]\ntimeout = 45\n');
    const { config } = loadConfig({ cwd: dir, env: {} });
    expect(config.server.max_payload_size).toBe(512 * 1024 * 1024);
    expect(config.server.shutdown_timeout).toBe(120_000);
    expect(config.query.timeout).toBe(45_000);
  });

  test('bad values name the key, the value and what is allowed', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SVC_COMPACTION_MEMORY_LIMIT: '50%' }, /compaction\.memory_limit = "50%".*unit: B, KB, MB or GB/],
      [{ SVC_COMPACTION_MEMORY_LIMIT: '512' }, /compaction\.memory_limit = "512"/],
      [{ SVC_LOG_LEVEL: 'loud' }, /log\.level = "loud": must be one of error, warn, info, debug/],
      [{ SVC_SERVER_PORT: 'abc' }, /server\.port = "abc": must be a whole number/],
      [{ SVC_SERVER_PORT: '70000' }, /server\.port = 70000/],
      [{ SVC_AUTH_ENABLED: 'maybe' }, /auth\.enabled.*must be true or false/],
      [{ SVC_SERVER_SHUTDOWN_TIMEOUT: 'soon' }, /server\.shutdown_timeout = "soon": must be a duration/],
    ];
    for (const [env, re] of cases) {
      let message = '';
      try {
        loadConfig({ env, cwd: mkdtempSync(join(tmpdir(), 'svc-empty-')) });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        message = (err as Error).message;
      }
      expect(message).toMatch(re);
    }
  });

  test('unknown keys and sections in the file are warnings naming them', () => {
    const dir = dirWith('[server]\nprot = 1\n[sever]\nport = 2\n');
    const { warnings, config } = loadConfig({ cwd: dir, env: { SVC_NOT_A_THING: '1' } });
    expect(warnings.join('\n')).toContain('server.prot');
    expect(warnings.join('\n')).toContain('[sever]');
    expect(config.server.port).toBe(8000);
  });

  test('a TOML syntax error is a clear ConfigError', () => {
    const dir = dirWith('[server\nport = 1');
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/cannot parse/);
  });
});

test('svc.toml.example is generated from the schemas and up to date (bun run config:example)', () => {
  const committed = readFileSync(join(import.meta.dir, '..', '..', 'svc.toml.example'), 'utf8');
  expect(committed).toBe(renderExample());
});
