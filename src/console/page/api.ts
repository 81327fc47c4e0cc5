/**
 * The console's HTTP client: every call carries the token the user entered (kept in sessionStorage
 * only), a server error becomes an ApiError with the server's own message, and a 401 ends the session.
 */

const TOKEN_KEY = 'svc.console.token';

/** An error answer of the server: its status and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads `{error}` / `{message}` from an error response, else its text. */
export async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const parts = [body.error, body.message].filter((x): x is string => typeof x === 'string' && x !== '');
    if (parts.length) return `${res.status}: ${[...new Set(parts)].join(': ')}`;
  } catch {
    // not JSON: the text itself is the message
  }
  return `${res.status}: ${text || res.statusText}`;
}

export interface RequestOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Raw body (a file); else `body` is sent as JSON. */
  raw?: BodyInit;
  /** A 401 here is about another credential (the memory key): it does not end the session. */
  keepSession?: boolean;
}

/** The session's client. */
export class Api {
  /** Called once when the server answers 401: the page returns to the login. */
  onUnauthorized: () => void = () => {};

  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  set token(value: string | null) {
    if (value === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, value);
  }

  /** Headers of an authenticated call. */
  authHeaders(extra: Record<string, string> = {}): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}`, ...extra } : { ...extra };
  }

  /** Sends a request; resolves with the response when it is 2xx, else throws ApiError. */
  async request(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<Response> {
    const headers = this.authHeaders(opts.headers);
    let payload: BodyInit | undefined = opts.raw;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(path, { method, headers, body: payload, signal: opts.signal });
    if (res.ok) return res;
    const message = await errorMessage(res);
    if (res.status === 401 && !opts.keepSession) {
      this.token = null;
      this.onUnauthorized();
    }
    throw new ApiError(res.status, message);
  }

  /** A JSON call. */
  async json<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, path, body, opts);
    const text = await res.text();
    return (text ? JSON.parse(text) : {}) as T;
  }
}

/** A JSON query result (spec, "Query result (JSON)"). */
export interface QueryResult {
  columns: string[];
  types: string[];
  data: unknown[][];
  row_count: number;
  execution_time_ms: number;
}

/** Double-quotes an identifier for SQL. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
