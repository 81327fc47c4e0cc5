/**
 * The console's entry: the login (the token lives in sessionStorage only), then a shell with one page
 * at a time. Any 401 from the server returns here to the login.
 */
import './style.css';
import { Api, errorMessage } from './api.ts';
import { adminPage } from './admin-page.ts';
import { errorBox, h, replace } from './dom.ts';
import { memoryPage } from './memory-page.ts';
import { queryPage } from './query-page.ts';
import { schemaPage } from './schema-page.ts';
import { writePage } from './write-page.ts';

const api = new Api();
const root = document.getElementById('app')!;
let expired = false;
api.onUnauthorized = () => {
  expired = true;
  login();
};

function login(): void {
  const input = h('input', { type: 'password', placeholder: 'API token', 'data-testid': 'token-input', 'aria-label': 'API token', autocomplete: 'off' });
  const message = h('div', {}, expired ? errorBox('Your token was refused (401): log in again.', 'login-error') : null);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    const res = await fetch('/api/v1/auth/verify', { headers: { authorization: `Bearer ${token}` } }).catch((err: Error) => err);
    if (res instanceof Error) return replace(message, errorBox(`cannot reach the server: ${res.message}`, 'login-error'));
    if (!res.ok) return replace(message, errorBox(await errorMessage(res), 'login-error'));
    api.token = token;
    expired = false;
    shell('query');
  };
  const form = h('form', { class: 'login', onsubmit: (ev) => void submit(ev) },
    h('h1', {}, 'svc console'),
    h('p', { class: 'muted' }, 'Enter an API token. It is kept in this tab only (sessionStorage).'),
    input,
    h('button', { class: 'primary', type: 'submit', 'data-testid': 'login-button' }, 'Log in'),
    message);
  replace(root, form);
  input.focus();
}

type PageName = 'query' | 'schema' | 'write' | 'admin' | 'memory';

function shell(page: PageName, sql?: string): void {
  const content = h('main', { class: 'content' });
  const open = (name: PageName, initialSql?: string) => {
    for (const b of nav.querySelectorAll('button[data-page]')) b.classList.toggle('active', (b as HTMLElement).dataset.page === name);
    const view =
      name === 'query' ? queryPage(api, initialSql)
      : name === 'schema' ? schemaPage(api, (s) => open('query', s))
      : name === 'write' ? writePage(api)
      : name === 'admin' ? adminPage(api)
      : memoryPage(api);
    replace(content, view);
  };
  const tab = (name: PageName, label: string) => h('button', { 'data-page': name, 'data-testid': `nav-${name}`, onclick: () => open(name) }, label);
  const nav = h('nav', {},
    h('span', { class: 'brand' }, 'svc'),
    tab('query', 'SQL'), tab('schema', 'Schema'), tab('write', 'Write'), tab('admin', 'Admin'), tab('memory', 'Memory'),
    h('span', { class: 'spacer' }),
    h('button', { 'data-testid': 'logout-button', onclick: () => { api.token = null; login(); } }, 'Log out'));
  replace(root, nav, content);
  open(page, sql);
}

if (api.token) shell('query');
else login();
