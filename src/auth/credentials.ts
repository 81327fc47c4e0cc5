/** Extracts the token from any accepted credential form: Bearer, Token, x-api-key, or `p=` where allowed. */
export function extractToken(headers: Headers, url: URL, allowQueryParam: boolean): string | null {
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
  if (allowQueryParam) {
    const p = url.searchParams.get('p');
    if (p) return p;
  }
  return null;
}
