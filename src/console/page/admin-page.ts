/**
 * Administration: tokens, retention, continuous queries, compaction and backups (status and
 * triggers), MQTT subscriptions, active queries with cancel, and cluster nodes when clustered.
 * Each panel loads on its own and shows its own errors.
 */
import { ApiError, type Api } from './api.ts';
import { cellText, errorBox, h, recordTable, replace } from './dom.ts';
import { messageOf } from './query-page.ts';

type Rec = Record<string, unknown>;
type Load = (body: HTMLElement, refresh: () => void) => Promise<Node | null>;

/** A titled panel that (re)loads its body; a null body hides the panel. */
function panel(title: string, testid: string, load: Load): HTMLElement {
  const body = h('div', { class: 'panel-body' });
  const el = h('section', { class: 'panel', 'data-testid': testid });
  const refresh = () => {
    replace(body, h('p', { class: 'muted' }, 'loading…'));
    load(body, refresh).then(
      (node) => (node ? replace(body, node) : el.remove()),
      (err: unknown) => replace(body, errorBox(messageOf(err), `${testid}-error`)),
    );
  };
  replace(el, h('header', {}, h('h3', {}, title), h('button', { class: 'small', onclick: refresh }, 'Refresh')), body);
  refresh();
  return el;
}

/** Runs an action and refreshes the panel, or shows the server's message in it. */
function act(body: HTMLElement, refresh: () => void, work: () => Promise<unknown>, done?: (result: unknown) => void) {
  return () =>
    void work().then(
      (result) => (done ? done(result) : refresh()),
      (err: unknown) => body.prepend(errorBox(messageOf(err), 'admin-action-error')),
    );
}

const list = <T extends string>(body: Rec, key: T): Rec[] => (Array.isArray(body[key]) ? (body[key] as Rec[]) : []);

/** The page. */
export function adminPage(api: Api): HTMLElement {
  const tokens = panel('Tokens', 'admin-tokens', async (body, refresh) => {
    const res = await api.json<Rec>('GET', '/api/v1/auth/tokens');
    const name = h('input', { placeholder: 'new token name', 'aria-label': 'token name', 'data-testid': 'token-name' });
    const admin = h('input', { type: 'checkbox', 'aria-label': 'admin' });
    const created = h('div', {});
    const create = act(body, refresh, () => api.json<Rec>('POST', '/api/v1/auth/tokens', { name: name.value.trim(), is_admin: admin.checked }), (r) => {
      replace(created, h('div', { class: 'notice', 'data-testid': 'token-created' }, 'New token (shown once, copy it now): ', h('code', {}, cellText((r as Rec).token))));
    });
    return h('div', {},
      recordTable(list(res, 'tokens'), ['id', 'name', 'is_admin', 'enabled', 'permissions', 'created_at', 'last_used_at'], (t) => [
        h('button', { class: 'small', onclick: act(body, refresh, () => api.request('POST', `/api/v1/auth/tokens/${encodeURIComponent(String(t.id))}/revoke`)) }, 'Revoke'),
      ]),
      h('div', { class: 'form' }, name, h('label', {}, admin, ' admin'), h('button', { onclick: create }, 'Create token')),
      created);
  });

  const retention = panel('Retention policies', 'admin-retention', async (body, refresh) => {
    const res = await api.json<Rec>('GET', '/api/v1/retention');
    return recordTable(list(res, 'policies'), ['id', 'name', 'database', 'measurement', 'retention_days', 'buffer_days', 'schedule', 'enabled'], (p) => [
      h('button', { class: 'small', onclick: act(body, refresh, () => api.request('POST', `/api/v1/retention/${encodeURIComponent(String(p.id))}/execute`)) }, 'Run now'),
    ]);
  });

  const cqs = panel('Continuous queries', 'admin-cq', async (body, refresh) => {
    const res = await api.json<Rec>('GET', '/api/v1/continuous_queries');
    const rows = list(res, 'continuous_queries').length ? list(res, 'continuous_queries') : list(res, 'queries');
    return recordTable(rows, ['id', 'name', 'database', 'destination_measurement', 'interval', 'schedule', 'enabled'], (q) => [
      h('button', { class: 'small', onclick: act(body, refresh, () => api.request('POST', `/api/v1/continuous_queries/${encodeURIComponent(String(q.id))}/execute`, {})) }, 'Run now'),
    ]);
  });

  const compaction = panel('Compaction', 'admin-compaction', async (body, refresh) => {
    const st = await api.json<Rec>('GET', '/api/v1/compaction/status');
    const stats = (st.stats ?? {}) as Rec;
    return h('div', {},
      h('dl', { class: 'stats' }, ...['enabled', 'running', 'last_run', 'next_run'].flatMap((k) => [h('dt', {}, k), h('dd', {}, cellText(st[k]))]),
        ...Object.entries(stats).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, cellText(v))])),
      h('button', { onclick: act(body, refresh, () => api.request('POST', '/api/v1/compaction/trigger', {})) }, 'Compact now'));
  });

  const backups = panel('Backups', 'admin-backups', async (body, refresh) => {
    const [res, st] = await Promise.all([api.json<Rec>('GET', '/api/v1/backup'), api.json<Rec>('GET', '/api/v1/backup/status')]);
    return h('div', {},
      h('p', {}, `Last operation: ${cellText(st.operation) || 'none'} ${cellText(st.backup_id)} ${cellText(st.status)} (${cellText(st.processed_files)}/${cellText(st.total_files)} files)`),
      recordTable(list(res, 'backups'), ['backup_id', 'created_at', 'total_files', 'total_bytes']),
      h('button', { onclick: act(body, refresh, () => api.request('POST', '/api/v1/backup')) }, 'Back up now'));
  });

  const mqtt = panel('MQTT subscriptions', 'admin-mqtt', async (body, refresh) => {
    const res = await api.json<Rec>('GET', '/api/v1/mqtt/subscriptions');
    return recordTable(list(res, 'subscriptions'), ['id', 'name', 'broker', 'database', 'status', 'connection'], (s) => {
      const id = encodeURIComponent(String(s.id));
      return s.status === 'running'
        ? [h('button', { class: 'small', onclick: act(body, refresh, () => api.request('POST', `/api/v1/mqtt/subscriptions/${id}/stop`)) }, 'Stop')]
        : [h('button', { class: 'small', onclick: act(body, refresh, () => api.request('POST', `/api/v1/mqtt/subscriptions/${id}/start`)) }, 'Start')];
    });
  });

  const active = panel('Active queries', 'admin-queries', async (body, refresh) => {
    let res: Rec | Rec[];
    try {
      res = await api.json<Rec | Rec[]>('GET', '/api/v1/queries/active');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return h('p', { class: 'notice', 'data-testid': 'queries-unavailable' }, 'Query management is not available on this server (GET /api/v1/queries/active answered 404).');
      throw err;
    }
    const rows = Array.isArray(res) ? res : list(res, 'queries');
    return recordTable(rows, Object.keys(rows[0] ?? { id: 0, sql: '' }).slice(0, 8), (q) => [
      h('button', { class: 'small', onclick: act(body, refresh, () => api.request('DELETE', `/api/v1/queries/${encodeURIComponent(String(q.id ?? q.query_id))}`)) }, 'Cancel'),
    ]);
  });

  const cluster = panel('Cluster nodes', 'admin-cluster', async () => {
    try {
      await api.json<Rec>('GET', '/api/v1/cluster');
    } catch (err) {
      // Not clustered (or no cluster routes): the panel is left out.
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) return null;
      throw err;
    }
    const res = await api.json<Rec | Rec[]>('GET', '/api/v1/cluster/nodes');
    const rows = Array.isArray(res) ? res : list(res, 'nodes');
    return recordTable(rows, Object.keys(rows[0] ?? { id: 0, role: '', state: '' }).slice(0, 8));
  });

  return h('section', { class: 'page admin-page' }, h('h2', {}, 'Administration'), tokens, active, retention, cqs, compaction, backups, mqtt, cluster);
}
