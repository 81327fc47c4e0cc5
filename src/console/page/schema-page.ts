/**
 * The schema browser: databases -> measurements -> columns and types, with the row count and time
 * range of a measurement. Each level loads when it is opened.
 */
import { ident, type Api, type QueryResult } from './api.ts';
import { errorBox, h, replace } from './dom.ts';
import { messageOf } from './query-page.ts';

/** The page; `openQuery` switches to the SQL page with a query. */
export function schemaPage(api: Api, openQuery: (sql: string) => void): HTMLElement {
  const tree = h('ul', { class: 'tree', 'data-testid': 'schema-tree' });
  const detail = h('div', { class: 'schema-detail', 'data-testid': 'schema-detail' }, h('p', { class: 'muted' }, 'Open a database, then pick a measurement.'));

  async function load(): Promise<void> {
    try {
      const { databases } = await api.json<{ databases: { name: string; measurement_count: number }[] }>('GET', '/api/v1/databases');
      if (databases.length === 0) replace(tree, h('li', { class: 'muted' }, 'No databases yet: write some data.'));
      else replace(tree, ...databases.map((db) => databaseNode(db.name, db.measurement_count)));
    } catch (err) {
      replace(tree, errorBox(messageOf(err), 'schema-error'));
    }
  }

  function databaseNode(name: string, count: number): HTMLElement {
    const children = h('ul', {});
    const node = h('details', { 'data-database': name }, h('summary', {}, h('span', { class: 'db-name' }, name), h('span', { class: 'muted' }, ` ${count} measurements`)), children);
    node.addEventListener('toggle', async () => {
      if (!node.open || children.childElementCount) return;
      try {
        const { measurements } = await api.json<{ measurements: { name: string }[] }>('GET', `/api/v1/databases/${encodeURIComponent(name)}/measurements`);
        replace(children, ...measurements.map((m) => h('li', {}, h('button', { class: 'link', 'data-measurement': m.name, onclick: () => void show(name, m.name) }, m.name))));
        if (!measurements.length) replace(children, h('li', { class: 'muted' }, 'no measurements'));
      } catch (err) {
        replace(children, errorBox(messageOf(err), 'schema-error'));
      }
    });
    return h('li', {}, node);
  }

  async function show(database: string, measurement: string): Promise<void> {
    const table = `${ident(database)}.${ident(measurement)}`;
    replace(detail, h('p', { class: 'muted' }, `loading ${database}.${measurement}…`));
    try {
      const [shape, stats] = await Promise.all([
        api.json<QueryResult>('POST', '/api/v1/query', { sql: `SELECT * FROM ${table} LIMIT 0` }),
        api.json<QueryResult>('POST', '/api/v1/query', { sql: `SELECT count(*) AS row_count, min(time) AS first_time, max(time) AS last_time FROM ${table}` }),
      ]);
      const [rows, first, last] = stats.data[0] ?? [0, null, null];
      const sql = `SELECT * FROM ${table} ORDER BY time DESC LIMIT 1000`;
      replace(detail,
        h('h3', {}, `${database}.${measurement}`),
        h('dl', { class: 'stats' },
          h('dt', {}, 'rows'), h('dd', { 'data-testid': 'schema-row-count' }, Number(rows).toLocaleString()),
          h('dt', {}, 'first'), h('dd', {}, String(first ?? '—')),
          h('dt', {}, 'last'), h('dd', {}, String(last ?? '—'))),
        h('table', { class: 'records', 'data-testid': 'schema-columns' },
          h('thead', {}, h('tr', {}, h('th', {}, 'column'), h('th', {}, 'type'))),
          h('tbody', {}, ...shape.columns.map((c, i) => h('tr', {}, h('td', {}, c), h('td', {}, shape.types[i] ?? ''))))),
        h('button', { class: 'primary', 'data-testid': 'schema-query', onclick: () => openQuery(sql) }, 'Query this measurement'),
      );
    } catch (err) {
      replace(detail, errorBox(messageOf(err), 'schema-error'));
    }
  }

  void load();
  return h('section', { class: 'page schema-page' }, h('div', { class: 'schema-side' }, h('h2', {}, 'Databases'), tree), detail);
}
