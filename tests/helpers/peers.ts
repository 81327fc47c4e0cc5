/**
 * Suites that need a program on the machine (mosquitto, openssl, ...): without it they skip, saying
 * so, on a developer's machine, and fail under CI, where a skipped suite would pass untested.
 */
import { describe, test } from 'bun:test';
import { isCI } from './ci.ts';

/** Registers the suite `title` as missing `what`: a skip locally, a failing test under CI. */
export function peerMissing(title: string, what: string): void {
  describe(title, () => {
    if (isCI()) {
      test(`${what} (required under CI)`, () => {
        throw new Error(`${what}: CI must install it (see .ci/run); the suite cannot run`);
      });
    } else {
      test.skip(`${what}; suite skipped (it fails under CI)`, () => {});
    }
  });
}
