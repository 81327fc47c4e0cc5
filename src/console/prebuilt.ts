/**
 * The console page as built into the executable. Here (running from source) it is null and the page is
 * bundled on first request; build.ts replaces this module with the bundle it made at build time.
 */
import type { ConsoleAssets } from './assets.ts';

/** The prebuilt page, or null when running from source. */
export const PREBUILT: ConsoleAssets | null = null;
