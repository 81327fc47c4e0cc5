/** Polls `check` every 100 ms until it returns a truthy value (bounded: 200 tries, about 20 s). */
export async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await check();
    if (v) return v;
    await Bun.sleep(100);
  }
  throw new Error('condition not met in time');
}
