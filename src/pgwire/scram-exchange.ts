/**
 * The server side of one SCRAM-SHA-256 exchange (RFC 5802, as Postgres runs it: no channel binding,
 * the SCRAM user name ignored in favour of the startup packet's). The token is found by its proof
 * (TokenService.verifyScram), since every verifier shares the installation's salt.
 */
import { randomBytes } from 'node:crypto';
import type { Principal, TokenService } from '../auth/index.ts';

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
