import type { Counter } from './metrics.ts';

/** Sentinels per generation. */
const SENTINELS = 4;

/**
 * Counts garbage collections for `svc_gc_cycles_total`. JavaScriptCore reports no GC events to
 * JavaScript (no `gc` performance entries in Bun), so the counter keeps one unreachable sentinel object
 * registered with a FinalizationRegistry: every collection, eden or full, frees the young sentinel, its
 * cleanup callback counts one cycle and arms a new sentinel. Several collections before the callback runs
 * count once, so the figure is a lower bound that moves with every burst of GC activity. JSC scans the
 * stack conservatively, so a stale pointer can keep one sentinel alive through many collections; each
 * generation therefore has several sentinels, and the first of them to go counts.
 */
export class GcCounter {
  private cycles = 0;
  private last: number | null = null;
  private running = false;
  private generation = 0;
  private readonly registry = new FinalizationRegistry<number>((generation) => this.collected(generation));

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
    // Fresh object literals that nothing references: reachable only through the registry's weak hold.
    for (let i = 0; i < SENTINELS; i++) this.registry.register({}, this.generation);
  }

  private collected(generation: number): void {
    if (!this.running || generation !== this.generation) return;
    this.generation++;
    this.cycles++;
    this.last = this.now();
    this.counter?.inc();
    this.arm();
  }
}
