/**
 * Native code: C files compiled at start by one loader, each with a TypeScript twin that gives the
 * same bytes (see loader.ts).
 */
export { RETAIN_FREED_MEMORY, restartWithEnv } from './allocator-env.ts';
export { compileC, configureNative, nativeAllowed, nativeFailed, nativeOnce } from './loader.ts';
export { C_SOURCES } from './sources.ts';
export { nativeStrings, type NativeStrings } from './strings.ts';
export { nativeSnappy, SNAPPY_ERRORS, type NativeInflate } from './snappy.ts';
