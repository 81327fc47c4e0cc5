/**
 * The server side of one SCRAM-SHA-256 exchange (RFC 5802, as Postgres runs it: no channel binding,
 * the SCRAM user name ignored in favour of the startup packet's). The token is found by its proof
 * (TokenService.verifyScram), since every verifier shares the installation's salt.
 */
import { randomBytes } from 'node:crypto';
import type { Principal, TokenService } from '../auth/index.ts';

/** The one SASL mechanism offered. */
export const SCRAM = 'SCRAM-SHA-256';
/** Registered SASL mechanism names a client may select: only these are named back in a refusal. */
const KNOWN_MECHANISMS = new Set(['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-1', 'SCRAM-SHA-1-PLUS', 'PLAIN', 'EXTERNAL', 'GSSAPI', 'GS2-KRB5', 'OAUTHBEARER', 'DIGEST-MD5', 'CRAM-MD5', 'ANONYMOUS']);

/**
 * The FATAL text for a SASL response that does not select SCRAM-SHA-256. What the client sent is
 * named only when it is a known mechanism: a client that sends its password where SCRAM is expected
 * puts the token itself in that field, and the message goes back to it and into the log.
 */
export function mechanismRefusal(mechanism: string): string {
  const selected = KNOWN_MECHANISMS.has(mechanism) ? `SASL mechanism ${mechanism}` : 'a SASL response that names no known mechanism (a password sent as plain text?)';
  return `cannot authenticate: the client sent ${selected}; svc expects ${SCRAM} over plain TCP (the password is accepted as cleartext only over TLS)`;
}

/** Outcome of the client's final message. */
export type ScramResult = { ok: true; principal: Principal; serverFinal: string } | { ok: false; reason: string };

/** One exchange: `first` answers client-first, `final` checks client-final. */
export class ScramExchange {
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';

  constructor(private readonly tokens: TokenService) {}

  /** The server-first message for `clientFirst` (`n,,n=<user>,r=<nonce>`); throws on a malformed one. */
  first(clientFirst: string): string {
    const m = /^([nyp])(=[^,]*)?,[^,]*,(.*)$/.exec(clientFirst);
    if (!m) throw new Error('malformed SCRAM client-first message');
    if (m[1] === 'p') throw new Error('SCRAM channel binding is not supported: connect with channel_binding=disable or prefer');
    this.clientFirstBare = m[3]!;
    const clientNonce = /(?:^|,)r=([^,]+)/.exec(this.clientFirstBare)?.[1];
    if (!clientNonce) throw new Error('SCRAM client-first message has no nonce');
    const { salt, iterations } = this.tokens.scramParameters();
    this.nonce = clientNonce + randomBytes(18).toString('base64');
    this.serverFirst = `r=${this.nonce},s=${salt.toString('base64')},i=${iterations}`;
    return this.serverFirst;
  }

  /** Checks the client's proof; on success the server-final message (`v=<signature>`). */
  final(clientFinal: string): ScramResult {
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (proofAt < 0) return { ok: false, reason: 'malformed SCRAM client-final message' };
    const withoutProof = clientFinal.slice(0, proofAt);
    if (/(?:^|,)r=([^,]+)/.exec(withoutProof)?.[1] !== this.nonce) return { ok: false, reason: 'SCRAM nonce mismatch' };
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const match = this.tokens.verifyScram(authMessage, proof);
    if (!match) return { ok: false, reason: 'no token matches the SCRAM proof' };
    return { ok: true, principal: match.principal, serverFinal: `v=${match.serverSignature.toString('base64')}` };
  }
}
