/**
 * The architecture rules of ../shared/DESIGN.md, enforced from the one list in src/lib/layers.ts:
 * imports flow one way between folders, only through a folder's index.ts, and each third-party
 * package lives in its one folder. The checker is proven on copies of src/ with bad imports planted.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LAYERS } from '../src/lib/layers.ts';
import { architectureViolations, importsUnder } from './helpers/architecture-rules.ts';

const SRC = join(import.meta.dir, '..', 'src');
const copies: string[] = [];
afterAll(() => copies.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Violations of a copy of src/ with `files` (path under src -> content) added. */
function violationsWith(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'svc-arch-'));
  copies.push(dir);
  cpSync(SRC, dir, { recursive: true, filter: (p) => !p.endsWith('.test.ts') });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return architectureViolations(dir);
}

describe('architecture', () => {
  test('the import scanner sees the codebase (a guard against a test that cannot fail)', () => {
    const all = importsUnder(SRC);
    expect(all.length).toBeGreaterThan(50);
    expect(all.some((i) => i.spec === 'hono')).toBe(true);
  });

  test('DESIGN.md rooms are all in the layer list, even those not built yet', () => {
    for (const room of ['lib', 'native', 'governance', 'audit', 'cluster', 'http', 'memory', 'main.ts']) expect(LAYERS).toContain(room as never);
    expect(LAYERS.indexOf('ingest')).toBeLessThan(LAYERS.indexOf('query'));
  });

  test('src/ follows every rule', () => {
    expect(architectureViolations(SRC)).toEqual([]);
  });

  test('a planted ingest -> query import is caught', () => {
    const bad = violationsWith({ 'ingest/planted.ts': "import { QueryService } from '../query/index.ts';\nexport const x = QueryService;\n" });
    expect(bad).toEqual(['ingest/planted.ts -> ../query/index.ts (ingest may not import query)']);
  });

  test('a planted import that skips a folder\'s index.ts is caught', () => {
    const bad = violationsWith({ 'http/planted.ts': "import { WriteService } from '../buffer/write-service.ts';\nexport const x = WriteService;\n" });
    expect(bad).toEqual(['http/planted.ts -> ../buffer/write-service.ts (not through buffer/index.ts)']);
  });

  test('a planted third-party import outside its folder is caught', () => {
    const bad = violationsWith({ 'query/planted.ts': "import { Hono } from 'hono';\nexport const x = Hono;\n" });
    expect(bad).toEqual(['query/planted.ts imports hono (allowed in http/, memory/http/, memory/index.ts, console/)']);
  });

  test('a planted import from memory/ into the time-series core, and an unlisted room, are caught', () => {
    const bad = violationsWith({
      'memory/planted.ts': "import { QueryService } from '../query/index.ts';\nexport const x = QueryService;\n",
      'attic/planted.ts': 'export const x = 1;\n',
    });
    expect(bad).toContain('attic: not a room of LAYERS (src/lib/layers.ts)');
    expect(bad).toContain('memory/planted.ts -> ../query/index.ts (memory/ imports only lib, observability, config)');
  });
});
