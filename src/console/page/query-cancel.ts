/**
 * Cancelling by id through query management (GET /api/v1/queries/active, DELETE /api/v1/queries/:id)
 * where the server offers it. The active list truncates SQL to 200 characters, so the running
 * query is matched on that prefix; a server without the routes answers 404 and the caller's abort
 * does the work alone.
 */
import { ApiError, type Api } from './api.ts';

interface ActiveQuery {
  id?: string | number;
  query_id?: string | number;
  sql?: string;
  query?: string;
}

/** Cancels the server's running query whose SQL matches; resolves with a note for the user, or null. */
export async function cancelOnServer(api: Api, sql: string): Promise<string | null> {
  let active: { queries?: ActiveQuery[] } | ActiveQuery[];
  try {
    active = await api.json<{ queries?: ActiveQuery[] } | ActiveQuery[]>('GET', '/api/v1/queries/active');
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
  const list = Array.isArray(active) ? active : (active.queries ?? []);
  const match = list.find((q) => {
    const text = (q.sql ?? q.query ?? '').replace(/…$|\.\.\.$/, '');
    return text.length > 0 && sql.startsWith(text);
  });
  const id = match?.id ?? match?.query_id;
  if (id === undefined) return null;
  try {
    await api.request('DELETE', `/api/v1/queries/${encodeURIComponent(String(id))}`);
  } catch (err) {
    // 409: it finished meanwhile; anything else is shown, the aborted request still stops it.
    if (err instanceof ApiError && err.status === 409) return null;
    return `The server did not cancel query ${id} (${(err as Error).message}); the aborted request stops it.`;
  }
  return `Cancelled query ${id} on the server.`;
}
