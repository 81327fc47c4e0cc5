/**
 * A flush worker (one Bun Worker per `ingest.flush_workers`): writes sealed rows as hourly Parquet
 * files into scratch paths, by the direct writer or, for what it does not cover, by its own
 * single-threaded DuckDB (see parquet/parquet-writer.ts); the main thread moves the files into storage
 * and registers them. All of that encoding stays off the main thread, and DuckDB's per-chunk callbacks
 * into JavaScript are answered by this worker's idle loop instead of waiting between HTTP requests.
 */
import { rmSync } from 'node:fs';
import { DuckDBInstance } from '../duckdb/index.ts';
import { fromWire } from '../ingest/index.ts';
import { syncFile } from '../lib/page-cache.ts';
import { currentThreadId } from '../lib/thread-priority.ts';
import { ConnectionFileWriter } from './file-writers.ts';
import { type CloseRequest, type FlushReply, type FlushRequest } from './flush-protocol.ts';

declare const self: Worker;

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

try {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await instance.connect();
  const writer = new ConnectionFileWriter(conn, 'svc_flush');
  // Requests run one at a time: the queue gives a worker its next job only after this one answered.
  self.onmessage = async (event: MessageEvent<FlushRequest | CloseRequest>) => {
    const req = event.data;
    if ('close' in req) {
      await writer.close();
      instance.closeSync();
      return self.postMessage({ closed: true } satisfies FlushReply);
    }
    try {
      const files = await writer.write(fromWire(req.batches), req.compression, req.scratchPrefix);
      if (req.settle) {
        try {
          // On this thread (below the event loop's priority): the file is marked `synced`, so the main
          // thread moves it into storage without syncing it again, and dropping its pages no longer
          // takes the event loop's time.
          for (const f of files) {
            await syncFile(f.path, true);
            f.synced = true;
          }
        } catch (err) {
          // Failed like a write: the job is written again from the start, so these files are of no use.
          for (const f of files) rmSync(f.path, { force: true });
          throw err;
        }
      }
      self.postMessage({ id: req.id, files } satisfies FlushReply);
    } catch (err) {
      self.postMessage({ id: req.id, error: messageOf(err) } satisfies FlushReply);
    }
  };
  self.postMessage({ ready: true, tid: currentThreadId() } satisfies FlushReply);
} catch (err) {
  self.postMessage({ ready: false, error: messageOf(err) } satisfies FlushReply);
}
