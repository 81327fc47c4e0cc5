/**
 * A parse worker (one Bun Worker per `ingest.parse_workers`): parses line-protocol and MessagePack
 * bodies into ColumnBatches whose arrays live in shared memory, so handing them back to the event
 * loop copies only each tag column's small dictionary (see batch-wire.ts).
 */
import { AppError } from '../../lib/errors.ts';
import { toWire } from '../batch-wire.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { type LineError, parseLineProtocol } from '../lineprotocol/index.ts';
import { parseMsgpackWrite } from '../msgpack/index.ts';
import type { ParseReply, ParseRequest } from './protocol.ts';

declare const self: Worker;

function answer(id: number, batches: ColumnBatch[], rest: { errors: LineError[]; lines: number; rejected: number }): void {
  const { batches: wire, transfer } = toWire(batches);
  self.postMessage({ id, batches: wire, ...rest } satisfies ParseReply, transfer);
}

self.onmessage = (event: MessageEvent<ParseRequest>) => {
  const req = event.data;
  try {
    if (req.format === 'msgpack') {
      const batches = parseMsgpackWrite(req.body, { now: req.now });
      answer(req.id, batches, { errors: [], lines: 0, rejected: 0 });
    } else {
      const parsed = parseLineProtocol(req.body, { precision: req.precision, now: req.now });
      answer(req.id, parsed.batches, { errors: parsed.errors, lines: parsed.lines, rejected: parsed.rejected });
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const app = err instanceof AppError ? { kind: err.kind, message, extra: err.extra, headers: err.headers } : undefined;
    self.postMessage({ id: req.id, error: message, app } satisfies ParseReply);
  }
};
self.postMessage({ ready: true } satisfies ParseReply);
