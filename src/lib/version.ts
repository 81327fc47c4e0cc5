import pkg from '../../package.json' with { type: 'json' };

/** The release version, compiled into the executable. */
export const VERSION: string = pkg.version;
