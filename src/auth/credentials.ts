/**
 * Extracts the token from any accepted credential form: Bearer, Token, x-api-key, or `p=` of `url`
 * (the request URL, given only where that form is allowed; parsed only when no header carries a token).
 */
export function extractToken(headers: Headers, url: string | null): string | null {
  const authz = headers.get('authorization');
  if (authz) {
    const m = /^(Bearer|Token)\s+(.+)$/i.exec(authz.trim());
    if (m) return m[2]!.trim();
    // InfluxDB 1.x clients may send Basic auth with the token as password.
    const basic = /^Basic\s+(.+)$/i.exec(authz.trim());
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const idx = decoded.indexOf(':');
      return idx >= 0 ? decoded.slice(idx + 1) : decoded;
    }
  }
  const key = headers.get('x-api-key');
  if (key) return key.trim();
  if (url !== null) {
    const p = new URL(url).searchParams.get('p');
    if (p) return p;
  }
  return null;
}
