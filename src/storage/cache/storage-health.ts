/**
 * What /health says about a storage tier, learned from the outcome of every remote call and from a
 * periodic probe: credentials ok, expired (refused) or missing, and whether the store answers.
 */
import { AppError, messageOf } from '../../lib/errors.ts';
import { StorageError } from './remote-backend.ts';

/** The credential states /health reports. */
export type CredentialState = 'ok' | 'expired' | 'missing';

/** `healthy`: the last call worked; `failing`: the store answered with an error; `unreachable`: it did not answer. */
export type StorageState = 'healthy' | 'failing' | 'unreachable';

/** One tier as /health shows it. */
export interface StorageHealthView {
  backend: string;
  credentials: CredentialState;
  state: StorageState;
  location?: string;
  error?: string;
  checked_at?: string;
}

/** Tracks one store's health; remote stores report every call, local disk is always healthy. */
export class StorageHealth {
  credentials: CredentialState = 'ok';
  state: StorageState = 'healthy';
  private error: string | null = null;
  private checkedAt: number | null = null;

  constructor(
    readonly backend: string,
    readonly location?: string,
  ) {}

  /** Records a call that the store answered normally ("no such object" included). */
  succeeded(): void {
    this.credentials = 'ok';
    this.state = 'healthy';
    this.error = null;
    this.checkedAt = Date.now();
  }

  /** Records a failed call; a missing object is a normal answer, not a failure. */
  failed(err: unknown): void {
    if (err instanceof AppError && err.kind === 'not_found') return this.succeeded();
    this.checkedAt = Date.now();
    this.error = messageOf(err);
    if (err instanceof StorageError) {
      if (err.credentials) this.credentials = err.credentials;
      this.state = err.reachable ? 'failing' : 'unreachable';
    } else this.state = 'failing';
  }

  /** Why /ready should fail over credentials, or null. */
  credentialProblem(): string | null {
    return this.credentials === 'ok' ? null : `storage credentials ${this.credentials}${this.error ? ` (${this.error})` : ''}`;
  }

  /** The /health object of this tier. */
  view(): StorageHealthView {
    const v: StorageHealthView = { backend: this.backend, credentials: this.credentials, state: this.state };
    if (this.location) v.location = this.location;
    if (this.error) v.error = this.error;
    if (this.checkedAt) v.checked_at = new Date(this.checkedAt).toISOString();
    return v;
  }
}
