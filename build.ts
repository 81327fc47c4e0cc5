/**
 * `bun run build`: compiles src/main.ts into one executable, dist/svc, that runs alone in an empty
 * folder. DuckDB's addon (duckdb.node) links libduckdb.so from its own folder, which the dynamic
 * linker cannot read from inside the executable, so both are embedded zstd-compressed and
 * `@duckdb/node-bindings` is replaced by a loader that extracts them once to a cache folder
 * (src/duckdb/native-loader.ts). Builds for the host platform only: the addon comes from the
 * platform package that `bun install` picked.
 *
 *   bun build.ts [--entry src/main.ts] [--outfile dist/svc]
 */
import type { BunPlugin } from 'bun';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildConsoleAssets, type ConsoleAssets } from './src/console/index.ts';

const root = import.meta.dir;
const { values: args } = parseArgs({
  options: {
    entry: { type: 'string', default: 'src/main.ts' },
    outfile: { type: 'string', default: 'dist/svc' },
  },
});

/** The addon and libraries of one platform package, compressed for embedding. */
interface NativeSet {
  version: string;
  target: string;
  addon: string;
  files: { name: string; compressedPath: string; size: number }[];
}

/** Same rule as @duckdb/node-bindings: musl hosts need the -musl package. */
function hostTarget(): string {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return base;
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return report.header?.glibcVersionRuntime ? base : `${base}-musl`;
}

/** Finds the host's DuckDB platform package and writes zstd copies of its native files under dist/.embed/. */
async function prepareNativeSet(): Promise<NativeSet> {
  const bindingsDir = dirname(Bun.resolveSync('@duckdb/node-bindings/package.json', root));
  const version: string = (await Bun.file(join(bindingsDir, 'package.json')).json()).version;
  const target = hostTarget();
  const pkg = `@duckdb/node-bindings-${target}`;
  let pkgDir: string;
  try {
    pkgDir = dirname(Bun.resolveSync(`${pkg}/package.json`, bindingsDir));
  } catch {
    throw new Error(`cannot build: ${pkg} is not installed; run \`bun install\` on a ${target} host`);
  }
  const names = readdirSync(pkgDir).filter((n) => /\.(node|so|dylib|dll)$/.test(n) || /\.so\.\d/.test(n));
  const addon = names.find((n) => n.endsWith('.node'));
  if (!addon) throw new Error(`cannot build: no .node file in ${pkgDir}`);
  const outDir = join(root, 'dist', '.embed', `duckdb-${version}-${target}`);
  mkdirSync(outDir, { recursive: true });
  const files: NativeSet['files'] = [];
  for (const name of names) {
    const source = join(pkgDir, name);
    const compressedPath = join(outDir, `${name}.zst`);
    // npm packages are immutable per version, so a compressed copy for this version stays valid.
    if (!isFile(compressedPath)) {
      const temp = `${compressedPath}.${process.pid}.tmp`;
      await Bun.write(temp, Bun.zstdCompressSync(await Bun.file(source).bytes(), { level: 9 }));
      renameSync(temp, compressedPath);
    }
    files.push({ name, compressedPath, size: statSync(source).size });
  }
  // Libraries first, addon last: a reader that sees the addon in place finds its libraries too.
  files.sort((a, b) => Number(a.name === addon) - Number(b.name === addon));
  return { version, target, addon, files };
}

/** Replaces `@duckdb/node-bindings` with generated code that loads the embedded addon. */
function embeddedDuckDBPlugin(set: NativeSet): BunPlugin {
  const loader = join(root, 'src', 'duckdb', 'native-loader.ts');
  const files = set.files.map((f) => `{ name: ${JSON.stringify(f.name)}, embeddedPath: require(${JSON.stringify(f.compressedPath)}), size: ${f.size} }`);
  // CommonJS, like the module it replaces: node-api reads the bindings both as `require(...).name`
  // and through `__importDefault(...)`, and only a plain `module.exports` serves both.
  const contents = [
    `const { loadEmbeddedAddon } = require(${JSON.stringify(loader)});`,
    `module.exports = loadEmbeddedAddon({ version: ${JSON.stringify(set.version)}, target: ${JSON.stringify(set.target)}, addon: ${JSON.stringify(set.addon)}, files: [${files.join(', ')}] });`,
  ].join('\n');
  return {
    name: 'svc-embedded-duckdb',
    setup(build) {
      build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({ path: 'node-bindings', namespace: 'svc-embedded-duckdb' }));
      build.onLoad({ filter: /.*/, namespace: 'svc-embedded-duckdb' }, () => ({ contents, loader: 'js' }));
    },
  };
}

/**
 * Puts the web console's bundled page into the executable: src/console/prebuilt.ts (null when running
 * from source, where the page is bundled on first request) becomes the assets built here.
 */
function prebuiltConsolePlugin(assets: ConsoleAssets): BunPlugin {
  const prebuilt = resolve(root, 'src', 'console', 'prebuilt.ts');
  return {
    name: 'svc-prebuilt-console',
    setup(build) {
      build.onLoad({ filter: /[\\/]console[\\/]prebuilt\.ts$/ }, (args) =>
        args.path === prebuilt ? { contents: `export const PREBUILT = ${JSON.stringify(assets)};`, loader: 'ts' } : undefined,
      );
    },
  };
}

/**
 * Bun bundles a Worker only when its file is an entrypoint of its own. Convention: worker files are
 * named `*-worker.ts`; inside the executable one lives at its path relative to src/, so it is started
 * as `new Worker('./buffer/flush-worker.ts')` there (see the build report).
 */
function workerEntrypoints(): string[] {
  return [...new Bun.Glob('src/**/*-worker.ts').scanSync({ cwd: root, absolute: true })].sort();
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const started = performance.now();
const set = await prepareNativeSet();
const consoleAssets = await buildConsoleAssets();
const outfile = resolve(root, args.outfile);
const result = await Bun.build({
  entrypoints: [resolve(root, args.entry), ...workerEntrypoints()],
  compile: {
    outfile,
    // The executable reads svc.toml and SVC_* variables only; a stray .env or bunfig.toml in the
    // working directory must not change how it runs.
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  // keepNames: logs and error reports still show class and function names.
  minify: { whitespace: true, syntax: true, identifiers: true, keepNames: true },
  sourcemap: 'linked',
  // ESM: main.ts uses top-level await, which the CommonJS default of bytecode builds refuses.
  format: 'esm',
  bytecode: true,
  // The compressed native files are embedded as files: at runtime `require()` of one gives its path.
  loader: { '.zst': 'file' },
  plugins: [embeddedDuckDBPlugin(set), prebuiltConsolePlugin(consoleAssets)],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
// Bun also writes source maps beside the executable, which already carries its own copies.
for (const output of result.outputs) if (output.path.endsWith('.map')) rmSync(output.path, { force: true });
const mb = (statSync(outfile).size / 1e6).toFixed(1);
console.log(`built ${outfile} (${mb} MB, DuckDB ${set.version} ${set.target}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
