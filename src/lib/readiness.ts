/** Process lifecycle as /ready reports it: 503 while starting (before WAL replay ends) and while stopping. */
export type Phase = 'starting' | 'ready' | 'stopping';

/** Holds the lifecycle phase and named readiness checks (e.g. storage credentials). */
export class Readiness {
  phase: Phase = 'starting';
  readonly startedAt = Date.now();
  private readonly checks = new Map<string, () => string | null>();

  /** Adds a check that returns a reason when the service must not be considered ready. */
  addCheck(name: string, check: () => string | null): void {
    this.checks.set(name, check);
  }

  /** Null when ready, else why not. */
  notReadyReason(): string | null {
    if (this.phase === 'starting') return 'starting up';
    if (this.phase === 'stopping') return 'shutting down';
    for (const [name, check] of this.checks) {
      const reason = check();
      if (reason) return `${name}: ${reason}`;
    }
    return null;
  }
}
