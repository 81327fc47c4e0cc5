/**
 * Suites that need a program on the machine (mosquitto, openssl, ...): without it they skip, saying
 * so, on a developer's machine, and fail under CI=true, where a skipped suite would pass untested.
 */
import { describe, test } from 'bun:test';

/** True under CI=true (or 1), where a missing peer is a failure, not a skip. */
export const inCI = () => /^(true|1)$/i.test(process.env.CI ?? '');

/** Registers the suite `title` as missing `what`: a skip locally, a failing test under CI=true. */
export function peerMissing(title: string, what: string): void {
  describe(title, () => {
    if (inCI()) {
      test(`${what} (required under CI=true)`, () => {
        throw new Error(`${what}: CI must install it (see .ci/run); the suite cannot run`);
      });
    } else {
      test.skip(`${what}; suite skipped (it fails under CI=true)`, () => {});
    }
  });
}
