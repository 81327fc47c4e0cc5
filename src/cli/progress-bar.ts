/**
 * A one-line progress bar on a terminal: redrawn in place at most every 100 ms, and nothing at all
 * when the stream is not a terminal (piped or redirected output stays clean).
 */
import { formatSize } from '../lib/sizes.ts';

/** Draws `[#####-----]  50%  1.0 MB/2.0 MB  3.5 MB/s` (without a total: bytes and rate only). */
export function progressBar(out: { isTTY?: boolean; write(s: string): unknown }, label: string) {
  const started = performance.now();
  let lastDraw = 0;
  const line = (done: number, total: number | null) => {
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? `  ${formatSize(done / seconds)}/s` : '';
    if (total === null || total <= 0) return `${label} ${formatSize(done)}${rate}`;
    const ratio = Math.min(1, done / total);
    const filled = Math.round(ratio * 30);
    return `${label} [${'#'.repeat(filled)}${'-'.repeat(30 - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatSize(done)}/${formatSize(total)}${rate}`;
  };
  return {
    /** Redraws the bar if enough time passed (always when `force`). */
    update(done: number, total: number | null, force = false) {
      if (!out.isTTY) return;
      const now = performance.now();
      if (!force && now - lastDraw < 100) return;
      lastDraw = now;
      out.write(`\r\x1b[2K${line(done, total)}`);
    },
    /** Ends the bar's line. */
    finish(done: number, total: number | null) {
      if (!out.isTTY) return;
      out.write(`\r\x1b[2K${line(done, total)}\n`);
    },
  };
}
