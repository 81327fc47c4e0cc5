/**
 * The parts of a running server in the order they started; stopping runs the same list backwards,
 * so each part stops while everything it uses is still there. A start-up that fails half way stops
 * what had started, instead of leaving files, ports and workers open.
 */

/** One part of the server: how it starts (optional: built already) and how it stops. */
export interface Service {
  name: string;
  start?: () => unknown;
  stop?: () => unknown;
}

/** A stop that failed; the other parts still stop. */
export type StopFailure = (name: string, err: unknown) => void;

/** See the file comment. */
export class ServiceStack {
  private readonly started: Service[] = [];

  constructor(private readonly onStopFailure: StopFailure) {}

  /** Starts `service` (awaiting its start) and records it for stopAll. */
  async start(service: Service): Promise<void> {
    await service.start?.();
    this.started.push(service);
  }

  /** Records a part that is already running (built by its constructor). */
  add(name: string, stop: () => unknown): void {
    this.started.push({ name, stop });
  }

  /** Names of the started parts, in start order. */
  names(): string[] {
    return this.started.map((s) => s.name);
  }

  /** Stops every started part, last first; a failing stop is reported and the rest still stop. */
  async stopAll(): Promise<void> {
    while (this.started.length > 0) {
      const s = this.started.pop()!;
      try {
        await s.stop?.();
      } catch (err) {
        this.onStopFailure(s.name, err);
      }
    }
  }
}
