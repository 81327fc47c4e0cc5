/**
 * The console page's script and style sheet, bundled with Bun's bundler from page/ (uPlot included):
 * nothing is fetched from anywhere but this server, so the console works offline.
 */
import { join } from 'node:path';
import { PREBUILT } from './prebuilt.ts';

/** The bundled page: one script, one style sheet. */
export interface ConsoleAssets {
  js: string;
  css: string;
}

/** Entry of the page bundle. */
export const CONSOLE_ENTRY = join(import.meta.dir, 'page', 'main.ts');

/** Bundles page/ for browsers (minified); throws with the bundler's messages when it fails. */
export async function buildConsoleAssets(): Promise<ConsoleAssets> {
  const result = await Bun.build({ entrypoints: [CONSOLE_ENTRY], target: 'browser', format: 'esm', minify: true });
  if (!result.success) throw new Error(`cannot bundle the console page: ${result.logs.map(String).join('\n')}`);
  const js = result.outputs.find((o) => o.path.endsWith('.js'));
  const css = result.outputs.find((o) => o.path.endsWith('.css'));
  if (!js || !css) throw new Error(`cannot bundle the console page: expected one .js and one .css output, got ${result.outputs.map((o) => o.path).join(', ')}`);
  return { js: await js.text(), css: await css.text() };
}

let built: Promise<ConsoleAssets> | null = null;

/** The page's assets: the prebuilt ones inside the executable, else bundled once on first use. */
export function consoleAssets(): Promise<ConsoleAssets> {
  if (PREBUILT) return Promise.resolve(PREBUILT);
  built ??= buildConsoleAssets().catch((err: unknown) => {
    built = null;
    throw err;
  });
  return built;
}
