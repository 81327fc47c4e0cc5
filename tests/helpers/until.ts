/** Polls `check` every 100 ms until it returns a truthy value (bounded: 200 tries, about 20 s). */
export async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await check();
    if (v) return v;
    await Bun.sleep(100);
  }
  throw new Error('condition not met in time');
}

/** Polls `probe` every 50 ms (an error counts as not yet) until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}
