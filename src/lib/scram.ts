/**
 * SCRAM-SHA-256 (RFC 5802 / 7677) key derivation and the stored verifier, in PostgreSQL's text form
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64). The verifier proves a client
 * knows the secret without the server keeping the secret or anything a client could log in with.
 */
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';

/** A parsed verifier. */
export interface ScramVerifier {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

/**
 * PostgreSQL's default, one count for every verifier (an exchange offers it before it knows the
 * token). Tokens carry 256 random bits: no count is needed against guessing, this one costs ~2 ms.
 */
export const SCRAM_ITERATIONS = 4096;

export const hmac = (key: Buffer, text: string | Buffer) => createHmac('sha256', key).update(text).digest();
export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

/** The verifier of `secret` under `salt` (RFC 5802 section 3, with SASLprep's identity on ASCII secrets). */
export function scramVerifier(secret: string, salt: Buffer, iterations = SCRAM_ITERATIONS): string {
  const salted = pbkdf2Sync(secret, salt, iterations, 32, 'sha256');
  const storedKey = sha256(hmac(salted, 'Client Key'));
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Parses a stored verifier; null when `text` is not one. */
export function parseScramVerifier(text: string | null): ScramVerifier | null {
  const m = text ? /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(text) : null;
  if (!m) return null;
  return { iterations: Number(m[1]), salt: Buffer.from(m[2]!, 'base64'), storedKey: Buffer.from(m[3]!, 'base64'), serverKey: Buffer.from(m[4]!, 'base64') };
}

/**
 * Checks a client proof against a verifier: ClientKey = proof XOR HMAC(StoredKey, authMessage) must
 * hash to StoredKey. Returns the server signature to send back, or null when the proof is wrong.
 */
export function checkScramProof(v: ScramVerifier, authMessage: string, proof: Buffer): Buffer | null {
  if (proof.length !== 32) return null;
  const signature = hmac(v.storedKey, authMessage);
  const clientKey = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) clientKey[i] = proof[i]! ^ signature[i]!;
  if (v.storedKey.length !== 32 || !timingSafeEqual(sha256(clientKey), v.storedKey)) return null;
  return hmac(v.serverKey, authMessage);
}
