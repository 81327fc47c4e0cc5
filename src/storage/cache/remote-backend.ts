/**
 * What a cloud object store (S3, Azure blob) must offer so that RemoteObjectStore can turn it into an
 * ObjectStore. Keys here are full object keys (any configured prefix already applied); backends only
 * speak their SDK and translate its failures with `storageError`.
 */
import { AppError, messageOf } from '../../lib/errors.ts';

/** One remote object; `etag` changes whenever the object's content is replaced. */
export interface RemoteObject {
  key: string;
  bytes: number;
  modifiedMs: number;
  etag: string;
}

/** The small set of calls every cloud backend implements. */
export interface RemoteBackend {
  /** Backend name as /health shows it (`s3`, `azure`). */
  readonly backend: string;
  /** Where the objects live, for messages: `s3://bucket`, `azure://account/container`. */
  readonly location: string;
  /** Uploads bytes or a local file (in parts when large); the object appears whole or not at all. */
  upload(key: string, source: Uint8Array | { file: string }): Promise<RemoteObject>;
  /** Downloads an object into `file`; throws AppError not_found when it does not exist. */
  download(key: string, file: string): Promise<RemoteObject>;
  /** The whole object; throws AppError not_found when it does not exist. */
  get(key: string): Promise<Uint8Array>;
  /** The object as a byte stream; throws AppError not_found when it does not exist. */
  stream(key: string): Promise<ReadableStream<Uint8Array>>;
  /** Metadata of one object, or null when it does not exist. */
  head(key: string): Promise<RemoteObject | null>;
  /** Every object whose key starts with `prefix`, in any order. */
  list(prefix: string): Promise<RemoteObject[]>;
  /** Removes an object; false when it did not exist. */
  delete(key: string): Promise<boolean>;
  /** Removes objects whether or not they exist, in as few requests as the provider allows; throws when one was not removed. */
  deleteMany(keys: readonly string[]): Promise<void>;
  /** One cheap authenticated call (bucket or container properties); throws the translated failure. */
  probe(): Promise<void>;
  /**
   * A small object written only when the condition holds: `absent` (If-None-Match: *) or `etag` (If-Match).
   * Null when the store refused it for the condition. A store that ignores conditions (s3rver) writes anyway.
   */
  putIf(key: string, bytes: Uint8Array, condition: PutCondition): Promise<RemoteObject | null>;
}

/** The condition of a conditional put. */
export type PutCondition = { absent: true } | { etag: string };

/** What a failure says about credentials: refused or expired, not found at all, or nothing. */
export type CredentialProblem = 'expired' | 'missing' | null;

/** How a backend classified one failure. */
export interface FailureKind {
  /** The provider's error code (AccessDenied, NoSuchBucket, AuthenticationFailed, ECONNREFUSED, ...). */
  code: string;
  credentials: CredentialProblem;
  /** The service answered (false: no connection, DNS, timeout). */
  reachable: boolean;
  /** The object does not exist (the bucket or container does). */
  missing?: boolean;
}

/** A translated cloud failure: a readable message plus the classification /health and retries need. */
export class StorageError extends AppError {
  readonly code: string;
  readonly credentials: CredentialProblem;
  readonly reachable: boolean;
  constructor(message: string, failure: FailureKind, cause: unknown) {
    const kind = failure.missing ? 'not_found' : failure.credentials ? 'internal' : 'unavailable';
    super(kind, message, { cause, headers: kind === 'unavailable' ? { 'Retry-After': '5' } : undefined });
    this.code = failure.code;
    this.credentials = failure.credentials;
    this.reachable = failure.reachable;
  }
}

/** Builds the one error shape every backend throws: "cannot <what> <location>: <code>: <detail>". */
export function storageError(what: string, location: string, failure: FailureKind, cause: unknown): StorageError {
  const detail = messageOf(cause);
  const text = detail && detail !== failure.code && detail !== 'UnknownError' ? `${failure.code}: ${detail}` : failure.code;
  return new StorageError(`cannot ${what} ${location}: ${text}`, failure, cause);
}
