/**
 * The SQL editor: a textarea (it keeps native editing, undo and IME) over a highlighted copy of its
 * text. Ctrl+Enter (Cmd+Enter) runs, Tab inserts two spaces.
 */
import { h } from './dom.ts';
import { tokenizeSql } from './sql-tokens.ts';

export interface SqlEditor {
  element: HTMLElement;
  textarea: HTMLTextAreaElement;
  get value(): string;
  set value(sql: string);
}

/** Builds an editor; `onRun` is called on Ctrl+Enter. */
export function sqlEditor(initial: string, onRun: () => void): SqlEditor {
  const code = h('code', {});
  const pre = h('pre', { class: 'sql-highlight', 'aria-hidden': 'true' }, code);
  const textarea = h('textarea', { class: 'sql-input', 'data-testid': 'sql-editor', spellcheck: 'false', autocomplete: 'off', 'aria-label': 'SQL' });
  textarea.value = initial;
  const paint = () => {
    code.replaceChildren(...tokenizeSql(textarea.value).map((t) => (t.kind === 'text' ? document.createTextNode(t.text) : h('span', { class: `tok-${t.kind}` }, t.text))));
    // A trailing newline needs a character after it to get its own line in a <pre>.
    code.append('\n');
    pre.scrollTop = textarea.scrollTop;
    pre.scrollLeft = textarea.scrollLeft;
  };
  textarea.addEventListener('input', paint);
  textarea.addEventListener('scroll', () => {
    pre.scrollTop = textarea.scrollTop;
    pre.scrollLeft = textarea.scrollLeft;
  });
  textarea.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      onRun();
    } else if (ev.key === 'Tab' && !ev.shiftKey) {
      ev.preventDefault();
      textarea.setRangeText('  ', textarea.selectionStart, textarea.selectionEnd, 'end');
      paint();
    }
  });
  paint();
  return {
    element: h('div', { class: 'sql-editor' }, pre, textarea),
    textarea,
    get value() {
      return textarea.value;
    },
    set value(sql: string) {
      textarea.value = sql;
      paint();
    },
  };
}
