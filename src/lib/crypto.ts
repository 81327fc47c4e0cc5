import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Hex SHA-256 of a string: how secrets (tokens, API keys) are stored. */
export function sha256Hex(text: string): string {
  // Bun's one-shot hash: a third of node:crypto's createHash cost, and it runs on every request.
  return Bun.SHA256.hash(text, 'hex');
}

/** URL-safe random string carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Short random id (hex), for record identifiers. */
export function randomId(bytes = 8): string {
  return randomBytes(bytes).toString('hex');
}

/** Constant-time string comparison, so a hash check does not leak how many characters matched. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Hex HMAC-SHA256 of `text` under `key`: how cluster nodes sign the requests they forward. */
export function hmacHex(key: string, text: string): string {
  return new Bun.CryptoHasher('sha256', key).update(text).digest('hex');
}
