/**
 * Whether this run is CI, read one way everywhere: under CI a missing peer program or tool is a
 * failure, since a suite or check that skips there would pass untested.
 */

/** True when CI is set to anything but empty, `0` or `false` (CI=true, CI=1, CI=yes, ...). */
export const isCI = (): boolean => !/^(|0|false)$/i.test((process.env.CI ?? '').trim());

/** Whether the optional tool `what` is `present`; under CI its absence throws (saying how CI installs it) instead of skipping. */
export function toolPresent(present: boolean, what: string): boolean {
  if (!present && isCI()) throw new Error(`${what} is required under CI (set to ${JSON.stringify(process.env.CI)}); .ci/run must install it`);
  return present;
}
