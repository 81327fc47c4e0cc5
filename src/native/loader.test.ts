import { afterEach, expect, test } from 'bun:test';
import { C_SOURCES, compileC, configureNative, nativeOnce } from './index.ts';

afterEach(() => configureNative({ enabled: true }));

test('a routine that fails to load is logged once, with its reason, and leaves the TypeScript path', () => {
  const warnings: string[] = [];
  configureNative({ enabled: true, warn: (m) => warnings.push(m) });
  let calls = 0;
  const broken = nativeOnce('test routine', () => {
    calls++;
    return compileC('broken', 'int svc_broken(void) { return }', { svc_broken: { args: [], returns: 'i32' } });
  });
  expect(broken()).toBeNull();
  expect(broken()).toBeNull();
  expect(calls).toBe(1);
  expect(warnings.length).toBe(1);
  expect(warnings[0]).toStartWith('native test routine not used, the TypeScript path gives the same results: ');
});

test('query.native_encoders = false keeps every routine off, and turning it back on restores them', () => {
  let loads = 0;
  const routine = nativeOnce('counted', () => ++loads);
  configureNative({ enabled: false });
  expect(routine()).toBeNull();
  expect(loads).toBe(0);
  configureNative({ enabled: true });
  expect(routine()).toBe(1);
  configureNative({ enabled: true, off: ['counted'] });
  expect(routine()).toBeNull();
  configureNative({ enabled: false });
  expect(routine()).toBeNull();
});

test('every C file of the folder compiles with the loader (each is part of the executable as text)', () => {
  expect(Object.keys(C_SOURCES).sort()).toEqual(['duckdb-chunks', 'json-rows', 'snappy', 'strings']);
  const s = compileC('strings', C_SOURCES.strings, { svc_string_total: { args: ['ptr', 'ptr', 'u64'], returns: 'u64' } });
  // Two valid strings of 3 and 20 bytes, in DuckDB's 16-byte headers.
  const headers = new Uint8Array(32);
  new DataView(headers.buffer).setUint32(0, 3, true);
  new DataView(headers.buffer).setUint32(16, 20, true);
  expect(Number(s.svc_string_total(headers, null, 2))).toBe(23);
});
