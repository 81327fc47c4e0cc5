import { z } from 'zod';
import { int, oneOf } from '../fields.ts';

/** [ingest]: write buffers and flush workers. */
export const ingestSection = z.object({
  flush_workers: int(2, 'Bun Workers writing Parquet files in parallel', 1, 64),
  flush_worker_nice: int(5, 'Nice steps the flush worker threads run below the event loop (Linux, at most nice 19): the event loop, which accepts every write, then runs first when the cores are busy and flushes use the CPU it leaves; a full flush queue still holds writes back. 0: same priority', 0, 19),
  parse_workers: int(2, 'Bun Workers parsing large bodies off the event loop (line protocol from 64 KiB, MessagePack from 4 MiB); 0 parses on it', 0, 64),
  flush_queue_size: int(64, 'Flush jobs that may wait; when full, writes wait and then get 503', 1),
  shard_count: int(16, 'Buffers live on one event loop, so there are no locks to stripe; while flushes fail, writes are refused (503) once max_buffer_size x shard_count rows wait in memory', 1, 1024),
  max_buffer_size: int(100_000, 'Records buffered per measurement before a flush', 1),
  max_buffer_age_ms: int(5000, 'Oldest buffered record age before a flush, in milliseconds', 1),
  compression: oneOf(['snappy', 'zstd', 'gzip', 'none'] as const, 'snappy', 'Parquet compression of flushed files'),
});
