import { z } from 'zod';
import { int, oneOf, size, str } from '../fields.ts';

/** [ingest]: write buffers and flush workers. */
export const ingestSection = z.object({
  flush_workers: int(2, 'Bun Workers writing Parquet files in parallel', 1, 64),
  flush_worker_nice: int(5, 'Nice steps the flush worker threads run below the event loop (Linux, at most nice 19): the event loop, which accepts every write, then runs first when the cores are busy and flushes use the CPU it leaves; a full flush queue still holds writes back. 0: same priority', 0, 19),
  parse_workers: int(2, 'Bun Workers parsing large bodies off the event loop (line protocol from 64 KiB, MessagePack from 4 MiB); 0 parses on it', 0, 64),
  flush_queue_size: int(64, 'Flush jobs that may wait; when full, writes wait and then get 503', 1),
  shard_count: int(16, 'Buffers live on one event loop, so there are no locks to stripe; while flushes fail, writes are refused (503) once max_buffer_size x shard_count rows wait in memory', 1, 1024),
  max_buffer_size: int(100_000, 'Records buffered per measurement before a flush', 1),
  max_buffered_size: size('', 'Column memory all write buffers and flushes in flight may hold together (estimated from their arrays and strings); empty: an eighth of RAM, at most 2GB, which leaves the rest to queries, DuckDB and the page cache on a small machine and is more than flushes need on a large one. A buffer past a quarter of it is flushed at once; once it is reached, writes get 503 with Retry-After until flushes free memory (no acknowledged row is dropped)', true),
  flush_max_attempts: int(3, 'Times a flush may fail to turn its rows into Parquet (the data, not storage: out of memory, a value the writer refuses, a crashed worker) before its rows are set aside in set_aside_path and their memory freed. Storage and disk failures (unreachable, refused, no space, read-only, I/O error) never count: those flushes retry until storage works again', 1, 1000),
  set_aside_path: str('./data/set-aside', 'Folder where flushes that kept failing leave their rows, as line protocol: <db>/<measurement>/<time>-<seq>.lp (re-import with svc write FILE --db DB --precision us)'),
  max_buffer_age_ms: int(5000, 'Oldest buffered record age before a flush, in milliseconds', 1),
  compression: oneOf(['snappy', 'zstd', 'gzip', 'none'] as const, 'snappy', 'Parquet compression of flushed files'),
});
