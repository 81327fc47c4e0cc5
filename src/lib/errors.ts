/** Error kinds a user can act on; the HTTP layer maps each kind to one status code. */
export type ErrorKind =
  | 'invalid' // 400: the request is malformed or breaks a rule
  | 'unauthenticated' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'too_large' // 413
  | 'unsupported_media_type' // 415: a body format or encoding the route does not read
  | 'rate_limited' // 429: a governance limit refused the request; Retry-After says when to retry
  | 'cancelled' // 409: the work was cancelled by an operator
  | 'unavailable' // 503: try again later (backpressure, starting, stopping)
  | 'timeout' // 504: the work took longer than allowed
  | 'internal'; // 500

const statusOf: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  cancelled: 409,
  unavailable: 503,
  timeout: 504,
  internal: 500,
};

/** The one error type of the service: a kind (-> status), a message for the user, optional extra body fields. */
export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(kind: ErrorKind, message: string, opts?: { extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown }) {
    super(message, opts?.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.extra = opts?.extra;
    this.headers = opts?.headers;
  }
  /** HTTP status code for this error's kind. */
  get status(): number {
    return statusOf[this.kind];
  }
}

/** Shorthand constructors, so call sites read as the rule they enforce. */
export const invalid = (msg: string, extra?: Record<string, unknown>) => new AppError('invalid', msg, { extra });
export const notFound = (msg: string) => new AppError('not_found', msg);
export const conflict = (msg: string, extra?: Record<string, unknown>) => new AppError('conflict', msg, { extra });
export const forbidden = (msg: string) => new AppError('forbidden', msg);
export const unauthenticated = (msg: string) => new AppError('unauthenticated', msg);
export const tooLarge = (msg: string) => new AppError('too_large', msg);
/** 429 with Retry-After in whole seconds (at least 1). */
export const rateLimited = (msg: string, retryAfterSec: number) =>
  new AppError('rate_limited', msg, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) } });
export const unavailable = (msg: string, retryAfterSec = 1) =>
  new AppError('unavailable', msg, { headers: { 'Retry-After': String(retryAfterSec) } });

/** Message of any thrown value, for logs and error bodies. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** What part of start-up failed; `svc serve` exits 2 with the message for every kind. */
export type StartupErrorKind = 'config' | 'storage' | 'wal' | 'recovery' | 'tls' | 'secrets' | 'cluster' | 'locked';

/**
 * A problem that keeps the server from starting: a setting or a resource the operator must fix.
 * The message reads "cannot start: <detail>"; `detail` alone serves callers that are not starting
 * (a key loaded later for a request).
 */
export class StartupError extends Error {
  constructor(
    readonly kind: StartupErrorKind,
    readonly detail: string,
    opts?: { cause?: unknown },
  ) {
    super(`cannot start: ${detail}`, opts);
  }
}
