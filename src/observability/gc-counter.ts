import type { Counter } from './metrics.ts';

/**
 * Counts garbage collections for `svc_gc_cycles_total`. JavaScriptCore reports no GC events to
 * JavaScript (no `gc` performance entries in Bun), so the counter keeps one unreachable sentinel object
 * registered with a FinalizationRegistry: every collection, eden or full, frees the young sentinel, its
 * cleanup callback counts one cycle and arms a new sentinel. Several collections before the callback runs
 * count once, so the figure is a lower bound that moves with every burst of GC activity.
 */
export class GcCounter {
  private cycles = 0;
  private last: number | null = null;
  private running = false;
  private readonly registry = new FinalizationRegistry<null>(() => this.collected());

  /** `now` is injectable so tests can check `lastAt` without reading the wall clock. */
  constructor(
    private readonly counter?: Counter,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts counting; idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
  }

  /** Stops counting: the next collected sentinel is not replaced. */
  stop(): void {
    this.running = false;
  }

  /** Collections seen so far and when the last one was noticed (epoch ms). */
  figures(): { cycles: number; lastAt: number | null } {
    return { cycles: this.cycles, lastAt: this.last };
  }

  private arm(): void {
    // A fresh object literal that nothing references: reachable only through the registry's weak hold.
    this.registry.register({}, null);
  }

  private collected(): void {
    if (!this.running) return;
    this.cycles++;
    this.last = this.now();
    this.counter?.inc();
    this.arm();
  }
}
