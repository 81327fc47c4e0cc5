/** How the memory service reaches the time-series service: a fetch function (in-process handler or network). */
export type SvcFetch = (req: Request) => Promise<Response>;

/** A fetch bound to a remote URL and token, or to the in-process app's handler. */
export function svcFetch(opts: { url: string; token: string; local?: SvcFetch }): SvcFetch {
  if (!opts.url && opts.local) {
    const local = opts.local;
    return (req) => {
      if (opts.token) req.headers.set('authorization', `Bearer ${opts.token}`);
      return local(req);
    };
  }
  const base = opts.url.replace(/\/$/, '');
  return (req) => {
    const u = new URL(req.url);
    const headers = new Headers(req.headers);
    if (opts.token) headers.set('authorization', `Bearer ${opts.token}`);
    return fetch(base + u.pathname + u.search, { method: req.method, headers, body: req.body, duplex: 'half' } as RequestInit);
  };
}
