/**
 * A few long-lived workers that write JSON rows in parallel with the main thread: formatting
 * doubles is most of JSON encoding and runs at one core's speed. A worker that fails to start or
 * crashes is dropped and its share is encoded on the main thread, so results never depend on them.
 */
import { availableParallelism } from 'node:os';
import { workerUrl } from '../../lib/worker-url.ts';
import type { JsonJob, JsonJobResult } from './json-worker.ts';

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (parts: Uint8Array[]) => void; reject: (err: Error) => void }>;
}

let slots: Slot[] | null = null;
let nextId = 0;

function start(): Slot[] {
  const count = Math.max(0, Math.min(3, availableParallelism() - 1));
  const out: Slot[] = [];
  for (let k = 0; k < count; k++) {
    try {
      const worker = new Worker(workerUrl('query/encode/json-worker.ts'));
      const slot: Slot = { worker, pending: new Map() };
      worker.onmessage = (e: MessageEvent<JsonJobResult>) => {
        const p = slot.pending.get(e.data.id);
        slot.pending.delete(e.data.id);
        if ('parts' in e.data) p?.resolve(e.data.parts);
        else p?.reject(new Error(e.data.error));
      };
      worker.onerror = (e) => {
        for (const p of slot.pending.values()) p.reject(new Error(`JSON worker failed: ${e.message}`));
        slot.pending.clear();
        slots = (slots ?? []).filter((s) => s !== slot);
      };
      // Idle workers must not keep the process alive.
      worker.unref();
      out.push(slot);
    } catch {
      break;
    }
  }
  return out;
}

/** Encodes a job on worker `k`; rejects when that worker is gone or fails. */
export function encodeOnWorker(k: number, job: Omit<JsonJob, 'id'>, transfer: ArrayBuffer[]): Promise<Uint8Array[]> {
  const slot = (slots ??= start())[k];
  if (!slot) return Promise.reject(new Error('no JSON worker'));
  const id = nextId++;
  return new Promise((resolve, reject) => {
    slot.pending.set(id, { resolve, reject });
    slot.worker.postMessage({ ...job, id }, transfer);
  });
}

/** The worker holding the fewest jobs if that is below `limit`, else -1 (started on first use). */
export function freeWorker(limit: number): number {
  const all = (slots ??= start());
  let best = -1;
  for (let k = 0; k < all.length; k++) if (all[k]!.pending.size < limit && (best < 0 || all[k]!.pending.size < all[best]!.pending.size)) best = k;
  return best;
}
