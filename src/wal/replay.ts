/**
 * Replay of the segment files found at start.
 *
 * Durability: a replayed file is not renamed `.wal.recovered` when it has been read, but when every
 * entry handed out from it has been released, i.e. its rows are in flushed Parquet files. Until then
 * it stays a `*.wal` file, so a crash during or after replay replays it again and nothing is lost.
 * Duplicates are avoided by release records: each release appends the released entry ids to the
 * active segment, and replay first collects every release record of every file and skips entries
 * already released. Files are removed oldest first, so a release record always outlives the entry it
 * names (records are written to the newest segment). The one window left for a duplicate is between
 * the manifest commit of a flush and the release call that follows it in the same task.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../observability/index.ts';
import { decodeBatches } from './batch-codec.ts';
import { KIND_DATA, KIND_RELEASE, readRelease, scanFrames, type ScanReport } from './frame.ts';
import { Segment, segmentName } from './segment.ts';
import type { ReplayApply, ReplayResult, WalMetrics, WalTicket } from './types.ts';

/** What replay needs from the running WAL. */
export interface ReplayHost {
  directory: string;
  logger: Logger;
  metrics: WalMetrics;
  /** Tracks a replayed file until its entries are released. */
  register(seg: Segment): void;
  /** Issues the ticket of one replayed entry (counts it pending in `seg`). */
  ticket(seg: Segment, offset: number, records: number): WalTicket;
  release(ticket: WalTicket): void;
  /** Removes (renames) files whose entries are all released, oldest first. */
  collect(): void;
}

/** Replays segment files `seqs` (ascending) into `apply`; damaged entries are counted and skipped. */
export async function replaySegments(host: ReplayHost, seqs: readonly number[], apply: ReplayApply): Promise<ReplayResult> {
  const result: ReplayResult = { files: 0, records: 0, dropped: 0, skipped: 0 };
  if (seqs.length === 0) return result;
  const released = collectReleased(host.directory, seqs);
  for (const seq of seqs) {
    const seg = loadSegment(host.directory, seq);
    const buf = readFileSync(seg.path);
    seg.replaying = true;
    host.register(seg);
    const report: ScanReport = { headerOk: true, dropped: 0 };
    let fileRecords = 0;
    for (const frame of scanFrames(buf, report)) {
      if (frame.kind === KIND_RELEASE) continue;
      if (frame.kind !== KIND_DATA) {
        report.dropped++;
        continue;
      }
      if (released.get(seq)?.has(frame.offset)) {
        result.skipped++;
        continue;
      }
      let write;
      try {
        write = decodeBatches(frame.body.subarray(1));
      } catch (err) {
        host.logger.warn('wal entry skipped', { file: seg.name, offset: frame.offset, error: (err as Error).message });
        report.dropped++;
        continue;
      }
      let rows = 0;
      for (const b of write.batches) rows += b.length;
      const ticket = host.ticket(seg, frame.offset, rows);
      let returned: WalTicket | void;
      try {
        returned = await apply(write.database, write.batches, ticket);
      } catch (err) {
        // The file stays a *.wal file (still marked replaying), so its rows are tried again at next start.
        throw new Error(`cannot replay WAL file ${seg.name} (entry at ${frame.offset}): ${(err as Error).message}`, { cause: err });
      }
      if (returned && returned !== ticket) host.release(ticket);
      fileRecords += rows;
    }
    if (!report.headerOk && buf.length > 0) host.logger.warn('wal file is not a svc WAL segment; nothing replayed from it', { file: seg.name });
    if (report.dropped > 0) host.logger.warn('wal entries damaged and skipped', { file: seg.name, dropped: report.dropped });
    seg.replaying = false;
    result.files++;
    result.records += fileRecords;
    result.dropped += report.dropped;
    host.metrics.walRecovery.inc();
    host.metrics.walRecoveryRecords.inc(fileRecords);
    host.metrics.walDroppedEntries.inc(report.dropped);
    host.logger.info('wal file replayed', { file: seg.name, records: fileRecords, dropped: report.dropped });
    host.collect();
  }
  return result;
}

/** Entry offsets per segment named by any release record in the files. */
function collectReleased(directory: string, seqs: readonly number[]): Map<number, Set<number>> {
  const released = new Map<number, Set<number>>();
  for (const seq of seqs) {
    const buf = readFileSync(join(directory, segmentName(seq)));
    for (const frame of scanFrames(buf, { headerOk: true, dropped: 0 })) {
      if (frame.kind !== KIND_RELEASE) continue;
      let ids;
      try {
        ids = readRelease(frame.body);
      } catch {
        continue; // an intact CRC with a malformed body: ignoring it can only cause a duplicate, never a loss
      }
      for (const id of ids) {
        let set = released.get(id.segment);
        if (!set) released.set(id.segment, (set = new Set()));
        set.add(id.offset);
      }
    }
  }
  return released;
}

function loadSegment(directory: string, seq: number): Segment {
  const path = join(directory, segmentName(seq));
  const st = statSync(path);
  return Segment.replayed(directory, seq, st.size, st.mtimeMs);
}
