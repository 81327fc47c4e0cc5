/**
 * The memory browser: agents, their sessions, and search, through the in-process memory service
 * (reached at /console/memory/*; it keeps its own API keys, sent as x-memory-key).
 */
import type { Api } from './api.ts';
import { errorBox, h, recordTable, replace } from './dom.ts';
import { messageOf } from './query-page.ts';

const KEY = 'svc.console.memory-key';
type Rec = Record<string, unknown>;

/** The page. */
export function memoryPage(api: Api): HTMLElement {
  const keyInput = h('input', { type: 'password', placeholder: 'memory API key (svcm_…)', 'data-testid': 'memory-key', 'aria-label': 'memory key', value: sessionStorage.getItem(KEY) ?? '' });
  const out = h('div', {});
  const query = h('input', { placeholder: 'search memories', 'data-testid': 'memory-search', 'aria-label': 'search' });
  const call = <T>(method: string, path: string, body?: unknown) => api.json<T>(method, `/console/memory${path}`, body, { headers: { 'x-memory-key': keyInput.value.trim() }, keepSession: true });

  async function agents(): Promise<void> {
    sessionStorage.setItem(KEY, keyInput.value.trim());
    try {
      const res = await call<{ agents: Rec[] }>('GET', '/api/v1/agents');
      replace(out, h('h3', {}, 'Agents'), recordTable(res.agents, ['agent_id', 'name', 'description', 'created_at'], (a) => [
        h('button', { class: 'small', onclick: () => void sessions(String(a.agent_id)) }, 'Sessions'),
      ]));
    } catch (err) {
      replace(out, errorBox(messageOf(err), 'memory-error'));
    }
  }

  async function sessions(agent: string): Promise<void> {
    try {
      const res = await call<{ sessions: Rec[] }>('GET', `/api/v1/sessions?agent_id=${encodeURIComponent(agent)}`);
      replace(out, h('h3', {}, `Sessions of ${agent}`), recordTable(res.sessions, ['session_id', 'agent_id', 'status', 'created_at']));
    } catch (err) {
      replace(out, errorBox(messageOf(err), 'memory-error'));
    }
  }

  async function search(): Promise<void> {
    sessionStorage.setItem(KEY, keyInput.value.trim());
    try {
      const res = await call<{ results: Rec[]; count: number }>('POST', '/api/v1/search', query.value.trim() ? { query: query.value.trim(), limit: 50 } : { limit: 50 });
      replace(out, h('h3', {}, `${res.count} memories`), h('div', { 'data-testid': 'memory-results' }, recordTable(res.results, ['time', 'agent_id', 'session_id', 'memory_type', 'event_type', 'content', 'score'])));
    } catch (err) {
      replace(out, errorBox(messageOf(err), 'memory-error'));
    }
  }

  return h('section', { class: 'page memory-page' },
    h('h2', {}, 'Agent memory'),
    h('div', { class: 'form' }, keyInput, h('button', { onclick: () => void agents() }, 'Agents'), query, h('button', { class: 'primary', onclick: () => void search() }, 'Search')),
    out);
}
