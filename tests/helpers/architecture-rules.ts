/**
 * The checks behind tests/architecture.test.ts, as a function over any source tree, so the test can
 * run them on src/ and on temporary copies with bad imports planted in them.
 */
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { LAYERS, PACKAGE_HOMES, SELF_CONTAINED, type Layer } from '../../src/lib/layers.ts';

/** One import statement of one file. */
export interface Import {
  file: string;
  spec: string;
}

/** Every import of every non-test .ts file under `srcDir` (paths relative to it). */
export function importsUnder(srcDir: string): Import[] {
  const files = [...new Glob('**/*.ts').scanSync(srcDir)].filter((f) => !f.endsWith('.test.ts'));
  const re = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;
  return files.flatMap((file) => [...readFileSync(join(srcDir, file), 'utf8').matchAll(re)].map((m) => ({ file, spec: (m[1] ?? m[2] ?? m[3])! })));
}

const topOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : file);
const rankOf = (top: string) => LAYERS.indexOf(top as Layer);

/** The package a specifier names: `@scope` for scoped packages, else the part before the first `/`. */
const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/')[0]! : spec.split('/')[0]!);

/** Violations of the layer rules in the tree at `srcDir`, one line each (empty when the tree is clean). */
export function architectureViolations(srcDir: string): string[] {
  const bad: string[] = [];
  const imports = importsUnder(srcDir);
  for (const top of new Set([...new Glob('**/*.ts').scanSync(srcDir)].map(topOf))) {
    if (rankOf(top) < 0) bad.push(`${top}: not a room of LAYERS (src/lib/layers.ts)`);
  }
  for (const { file, spec } of imports) {
    if (!spec.startsWith('.')) {
      const homes = PACKAGE_HOMES[packageOf(spec)];
      if (homes && !homes.some((h) => file.startsWith(h))) bad.push(`${file} imports ${spec} (allowed in ${homes.join(', ')})`);
      continue;
    }
    const target = relative(srcDir, resolve(srcDir, dirname(file), spec));
    if (target.startsWith('..')) {
      if (!/package\.json$/.test(target)) bad.push(`${file} -> ${spec} (outside src)`);
      continue;
    }
    const from = topOf(file);
    const to = topOf(target);
    if (from === to) continue;
    const allowed = SELF_CONTAINED[from as Layer];
    if (allowed && !allowed.includes(to as Layer)) bad.push(`${file} -> ${spec} (${from}/ imports only ${allowed.join(', ')})`);
    else if (rankOf(to) >= rankOf(from)) bad.push(`${file} -> ${spec} (${from} may not import ${to})`);
    // lib/ is a bag of independent pure helpers; each file is its own public face.
    if (to !== 'lib' && target !== `${to}/index.ts`) bad.push(`${file} -> ${spec} (not through ${to}/index.ts)`);
  }
  return bad;
}
