import type { Logger } from './logger.ts';
import type { Gauge } from './metrics.ts';

/**
 * Sets gauges from their owners' figures on a fixed interval (the spec samples
 * `svc_buffer_records_buffered` once per second). Owners register a source with `add`; a source that throws
 * is logged once and leaves its gauge at the last good value.
 */
export class GaugeSampler {
  private readonly sources: { gauge: Gauge; read: () => number; failed: boolean }[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly intervalMs = 1000,
    private readonly logger?: Logger,
  ) {}

  /** Samples `gauge` from `read` every interval, starting now. */
  add(gauge: Gauge, read: () => number): void {
    const source = { gauge, read, failed: false };
    this.sources.push(source);
    this.sample(source);
  }

  /** Samples every source once, immediately. */
  sampleNow(): void {
    for (const s of this.sources) this.sample(s);
  }

  /** Starts the interval; idempotent. The timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sampleNow(), this.intervalMs);
    this.timer.unref?.();
  }

  /** Stops sampling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private sample(s: { gauge: Gauge; read: () => number; failed: boolean }): void {
    try {
      s.gauge.set(s.read());
      s.failed = false;
    } catch (err) {
      if (!s.failed) this.logger?.warn('cannot sample gauge', { metric: s.gauge.name, error: (err as Error).message });
      s.failed = true;
    }
  }
}
