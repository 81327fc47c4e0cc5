/**
 * Secrets at rest: AES-256-GCM with a random 96-bit nonce per value. The record id is bound as
 * additional authenticated data, so a ciphertext copied onto another row does not decrypt.
 * Stored form: `v1:<nonce b64>:<tag b64>:<ciphertext b64>`.
 */
import { StartupError } from '../../lib/errors.ts';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

const KEY_BYTES = 32;

/** Encrypts and decrypts short secrets with one 256-bit key, given or loaded on first use. */
export class SecretBox {
  private loaded: Buffer | null = null;

  constructor(private readonly source: Buffer | (() => Buffer)) {}

  private get key(): Buffer {
    if (this.loaded) return this.loaded;
    const key = typeof this.source === 'function' ? this.source() : this.source;
    if (key.length !== KEY_BYTES) throw new Error(`invariant broken: secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
    return (this.loaded = key);
  }

  /** Ciphertext of `plaintext`, bound to `context` (the owning record's id). */
  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${nonce.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${body.toString('base64')}`;
  }

  /** The plaintext of `sealed`; throws "cannot decrypt ..." when the key or context is wrong or the value was altered. */
  open(sealed: string, context: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('cannot decrypt secret: unknown format');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(parts[1]!, 'base64'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(parts[2]!, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('cannot decrypt secret: the encryption key differs from the one that sealed it (mqtt.encryption_key or the key file)');
    }
  }
}

/** Where the key came from, for the startup log. */
export type KeySource = 'config' | 'key-file-created' | 'key-file' | 'ephemeral';

/**
 * The secret key: `configKey` (base64 of 32 bytes) when set, else the key file at `keyFile`
 * (created with 0600 permissions when missing), else — with no file location (in-memory metadata) —
 * a key that lives as long as the process.
 */
export function loadSecretKey(configKey: string, keyFile: string | null): { key: Buffer; source: KeySource } {
  if (configKey.trim() !== '') {
    const key = Buffer.from(configKey.trim(), 'base64');
    if (key.length !== KEY_BYTES)
      throw new StartupError('secrets', `mqtt.encryption_key must be the base64 encoding of ${KEY_BYTES} bytes (openssl rand -base64 32), got ${key.length} bytes`);
    return { key, source: 'config' };
  }
  if (keyFile === null) return { key: randomBytes(KEY_BYTES), source: 'ephemeral' };
  if (existsSync(keyFile)) {
    const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
    if (key.length !== KEY_BYTES) throw new StartupError('secrets', `key file ${keyFile} does not hold a base64 ${KEY_BYTES}-byte key`);
    // A key readable by others defeats encryption at rest; tighten it rather than refuse to start.
    if ((statSync(keyFile).mode & 0o077) !== 0) chmodSync(keyFile, 0o600);
    return { key, source: 'key-file' };
  }
  mkdirSync(dirname(keyFile), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // `wx`: never overwrite a key another process wrote in the meantime.
  writeFileSync(keyFile, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(keyFile, 0o600); // the umask may have dropped bits of `mode`; be explicit
  return { key, source: 'key-file-created' };
}
