/**
 * A parse worker (one Bun Worker per `ingest.parse_workers`): parses line-protocol bodies into
 * ColumnBatches whose arrays live in shared memory, so handing them back to the event loop copies
 * only each tag column's small dictionary (see batch-wire.ts).
 */
import { toWire } from '../batch-wire.ts';
import { parseLineProtocol } from '../lineprotocol/index.ts';
import type { ParseReply, ParseRequest } from './protocol.ts';

declare const self: Worker;

self.onmessage = (event: MessageEvent<ParseRequest>) => {
  const { id, body, precision, now } = event.data;
  try {
    const parsed = parseLineProtocol(body, { precision, now });
    const { batches, transfer } = toWire(parsed.batches);
    self.postMessage({ id, batches, errors: parsed.errors, lines: parsed.lines, rejected: parsed.rejected } satisfies ParseReply, transfer);
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies ParseReply);
  }
};
self.postMessage({ ready: true } satisfies ParseReply);
