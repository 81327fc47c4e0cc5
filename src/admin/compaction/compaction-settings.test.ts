import { describe, expect, test } from 'bun:test';
import { loadConfig } from '../../config/index.ts';
import { compactionSettings } from './compaction-settings.ts';

const settings = (env: Record<string, string>) => compactionSettings(loadConfig({ env, cwd: '/nonexistent' }).config, { cores: 8, memoryBytes: 10 * 1024 ** 3 });

describe('compaction settings', () => {
  test('memory_limit: explicit, else database.memory_limit / max_concurrent, else 80% of RAM / max_concurrent', () => {
    expect(settings({ SVC_COMPACTION_MEMORY_LIMIT: '512MB' }).memoryLimitBytes).toBe(512 * 1024 ** 2);
    expect(settings({ SVC_DATABASE_MEMORY_LIMIT: '8GB', SVC_COMPACTION_MAX_CONCURRENT: '4' }).memoryLimitBytes).toBe(2 * 1024 ** 3);
    expect(settings({}).memoryLimitBytes).toBe(Math.floor((10 * 1024 ** 3 * 0.8) / 2));
    expect(() => settings({ SVC_COMPACTION_MEMORY_LIMIT: '50%' })).toThrow(/memory_limit/);
  });

  test('threads 0 is half the cores; max_files_per_batch falls back to 30 out of range, 1 is rejected', () => {
    expect(settings({}).threads).toBe(4);
    expect(settings({ SVC_COMPACTION_THREADS: '3' }).threads).toBe(3);
    expect(compactionSettings(loadConfig({ env: {}, cwd: '/nonexistent' }).config, { cores: 1, memoryBytes: 1e9 }).threads).toBe(1);
    expect(settings({}).maxFilesPerBatch).toBe(30);
    expect(settings({ SVC_COMPACTION_MAX_FILES_PER_BATCH: '500' }).maxFilesPerBatch).toBe(500);
    expect(settings({ SVC_COMPACTION_MAX_FILES_PER_BATCH: '501' }).maxFilesPerBatch).toBe(30);
    expect(settings({ SVC_COMPACTION_MAX_FILES_PER_BATCH: '0' }).maxFilesPerBatch).toBe(30);
    expect(() => settings({ SVC_COMPACTION_MAX_FILES_PER_BATCH: '1' })).toThrow(/max_files_per_batch/);
  });
});
