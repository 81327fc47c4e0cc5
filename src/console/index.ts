/** The built-in web console: its page (bundled from page/) and the routes that serve it. */
export { consoleRoutes, CONSOLE_CSP, type MemoryFetch } from './console-routes.ts';
export { buildConsoleAssets, consoleAssets, CONSOLE_ENTRY, type ConsoleAssets } from './assets.ts';
