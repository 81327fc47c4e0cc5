/** Translates Azure SDK failures (RestError) into StorageError: a readable message and what it says about credentials. */
import { storageError, type CredentialProblem, type StorageError } from '../cache/remote-backend.ts';

/** Error codes that mean the credentials were refused: a wrong key, an expired or narrow SAS, no permission. */
const REFUSED = new Set([
  'AuthenticationFailed',
  'AuthorizationFailure',
  'AuthorizationPermissionMismatch',
  'AuthorizationResourceTypeMismatch',
  'AuthorizationServiceMismatch',
  'AuthorizationProtocolMismatch',
  'AuthorizationSourceIPMismatch',
  'InvalidAuthenticationInfo',
  'NoAuthenticationInformation',
]);

interface RestFailure {
  name?: string;
  code?: string;
  statusCode?: number;
  details?: { errorCode?: string };
}

/** The service's error code (`BlobNotFound`, `AuthenticationFailed`) or a system code (`ECONNREFUSED`). */
export function azureCode(err: unknown): string {
  const e = (err ?? {}) as RestFailure;
  const code = e.details?.errorCode ?? e.code;
  if (code) return code;
  return e.statusCode ? `HTTP ${e.statusCode}` : (e.name ?? 'Error');
}

/** True when the failure means "no such blob" (a missing container is a different, real failure). */
export function isMissingBlob(err: unknown): boolean {
  const e = (err ?? {}) as RestFailure;
  const code = azureCode(err);
  return code === 'BlobNotFound' || (e.statusCode === 404 && code !== 'ContainerNotFound' && code !== 'ResourceNotFound');
}

function credentialProblem(code: string, status: number | undefined, anonymous: boolean): CredentialProblem {
  if (!REFUSED.has(code) && status !== 403 && status !== 401) return null;
  return anonymous ? 'missing' : 'expired';
}

/** Wraps an SDK failure of `what` (for example "write db/m/x.parquet to") at `location`. */
export function azureError(what: string, location: string, err: unknown, anonymous: boolean): StorageError {
  const code = azureCode(err);
  const status = (err as RestFailure | null)?.statusCode;
  // The SDK's message repeats the whole XML body; its first line is the part a person needs.
  const cause = err instanceof Error ? Object.assign(new Error(err.message.split('\n')[0]), { cause: err }) : err;
  return storageError(what, location, { code, credentials: credentialProblem(code, status, anonymous), reachable: status !== undefined, missing: isMissingBlob(err) }, cause);
}
