/** Translates AWS SDK failures into StorageError: a readable message and what it says about credentials. */
import { storageError, type CredentialProblem, type StorageError } from '../cache/remote-backend.ts';

/** Provider codes that mean the credentials were refused: wrong, revoked or expired keys, or no permission. */
const REFUSED = new Set([
  'AccessDenied',
  'AllAccessDisabled',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'ExpiredTokenException',
  'TokenRefreshRequired',
  'InvalidToken',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'AuthorizationHeaderMalformed',
  'Forbidden',
]);

interface SdkFailure {
  name?: string;
  code?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

/** The provider's code of a failure (`AccessDenied`, `NoSuchBucket`), or a system code (`ECONNREFUSED`). */
export function s3Code(err: unknown): string {
  const e = (err ?? {}) as SdkFailure;
  if (e.Code) return e.Code;
  if (e.name && e.name !== 'Error' && e.name !== 'UnknownError' && e.name !== 'Unknown') return e.name;
  if (typeof e.code === 'string') return e.code;
  const status = e.$metadata?.httpStatusCode;
  return status ? `HTTP ${status}` : 'Error';
}

/** HTTP status of an SDK failure, when the service answered. */
export function s3Status(err: unknown): number | undefined {
  return (err as SdkFailure | null)?.$metadata?.httpStatusCode;
}

/** True when the failure means "no such object" (not "no such bucket"). */
export function isMissingObject(err: unknown): boolean {
  const code = s3Code(err);
  return code === 'NoSuchKey' || code === 'NotFound' || (code !== 'NoSuchBucket' && s3Status(err) === 404);
}

/** Whether a failure with this code and status means the credentials were refused or are missing. */
export function credentialProblem(code: string, status: number | undefined): CredentialProblem {
  if (code === 'CredentialsProviderError') return 'missing';
  return REFUSED.has(code) || status === 403 ? 'expired' : null;
}

/** Wraps an SDK failure of `what` (for example "write db/m/x.parquet to") at `location`. */
export function s3Error(what: string, location: string, err: unknown): StorageError {
  let code = s3Code(err);
  const status = s3Status(err);
  // A HEAD has no body: a 403 or a bucket-level 404 arrive without a code.
  if (code === 'HTTP 403') code = 'AccessDenied';
  return storageError(what, location, { code, credentials: credentialProblem(code, status), reachable: status !== undefined, missing: isMissingObject(err) }, err);
}
