/**
 * A shared allowance of bytes (the memory all request bodies in flight may hold together). Holders
 * take before they allocate and give back when they let go, so the sum never passes the limit.
 */
export class ByteBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Reserves `n` bytes; false (and nothing reserved) when that would pass the limit. */
  take(n: number): boolean {
    if (n <= 0) return true;
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }

  /** Returns `n` bytes taken earlier. */
  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }

  /** Bytes currently reserved. */
  inUse(): number {
    return this.used;
  }
}
