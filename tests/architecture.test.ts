/**
 * The architecture rules of ../shared/DESIGN.md, enforced: imports flow one way between folders,
 * only through a folder's index.ts, and each third-party package lives in exactly one folder.
 */
import { describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = join(import.meta.dir, '..', 'src');

/**
 * Lowest first; a folder may import only folders of lower rank. duckdb/ sits below parquet/ and
 * buffer/ because the Parquet writer is DuckDB (the faster writer measured in issue 3).
 */
const RANK = ['lib', 'observability', 'config', 'catalog', 'duckdb', 'storage', 'ingest', 'wal', 'parquet', 'buffer', 'query', 'auth', 'admin', 'cluster', 'http', 'memory', 'cli', 'main.ts'];

/** memory/ must be able to ship alone: it talks to the time-series service over HTTP only. */
const MEMORY_MAY_IMPORT = new Set(['lib', 'observability', 'config', 'memory']);

/** Third-party packages and the only folders (path prefixes under src/) allowed to import them. */
const PACKAGE_HOMES: [RegExp, string[]][] = [
  [/^@duckdb\//, ['duckdb/']],
  [/^hono(\/|$)/, ['http/', 'memory/http/', 'memory/index.ts']],
  // memory/ keeps its own SQLite file (agents, sessions, keys, tombstones, the full-text index) so it can ship alone.
  [/^bun:sqlite$/, ['catalog/', 'memory/']],
  [/^@modelcontextprotocol\//, ['memory/mcp/']],
  [/^mqtt$/, ['admin/mqtt/']],
  [/^@aws-sdk\//, ['storage/s3/']],
  [/^@azure\//, ['storage/azure/']],
  [/^hyparquet-writer(\/|$)/, ['parquet/']],
];

interface Import {
  file: string;
  spec: string;
}

function sourceFiles(): string[] {
  return [...new Glob('**/*.ts').scanSync(SRC)].filter((f) => !f.endsWith('.test.ts'));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const out: Import[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(re)) out.push({ file, spec: (m[1] ?? m[2] ?? m[3])! });
  return out;
}

const topOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : file);
const all = sourceFiles().flatMap(importsOf);

describe('architecture', () => {
  test('the import scanner sees the codebase (a guard against a test that cannot fail)', () => {
    expect(all.length).toBeGreaterThan(50);
    expect(all.some((i) => i.spec === 'hono')).toBe(true);
  });

  test('every source file sits in a known top-level folder', () => {
    const unknown = [...new Set(sourceFiles().map(topOf))].filter((t) => !RANK.includes(t));
    expect(unknown).toEqual([]);
  });

  test('imports between folders flow one way (lower rank only)', () => {
    const bad: string[] = [];
    for (const { file, spec } of all) {
      if (!spec.startsWith('.')) continue;
      const target = relative(SRC, resolve(SRC, dirname(file), spec));
      if (target.startsWith('..')) {
        if (!/package\.json$/.test(target)) bad.push(`${file} -> ${spec} (outside src)`);
        continue;
      }
      const from = topOf(file);
      const to = topOf(target);
      if (from === to) continue;
      if (from === 'memory' && !MEMORY_MAY_IMPORT.has(to)) bad.push(`${file} -> ${spec} (memory/ imports only lib, observability, config)`);
      else if (RANK.indexOf(to) >= RANK.indexOf(from)) bad.push(`${file} -> ${spec} (${from} may not import ${to})`);
    }
    expect(bad).toEqual([]);
  });

  test("another folder is imported only through its index.ts", () => {
    const bad: string[] = [];
    for (const { file, spec } of all) {
      if (!spec.startsWith('.')) continue;
      const target = relative(SRC, resolve(SRC, dirname(file), spec));
      if (target.startsWith('..') || topOf(file) === topOf(target)) continue;
      const top = topOf(target);
      // lib/ is a bag of independent pure helpers; each file is its own public face.
      if (top === 'lib') continue;
      if (target !== `${top}/index.ts`) bad.push(`${file} -> ${spec}`);
    }
    expect(bad).toEqual([]);
  });

  test('each third-party package is imported only in its home folder', () => {
    const bad: string[] = [];
    for (const { file, spec } of all) {
      for (const [re, homes] of PACKAGE_HOMES)
        if (re.test(spec) && !homes.some((h) => file.startsWith(h))) bad.push(`${file} imports ${spec} (allowed in ${homes.join(', ')})`);
    }
    expect(bad).toEqual([]);
  });
});
