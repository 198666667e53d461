// A tiny element builder. Text always goes in as text nodes: previews and names are model- or
// server-written, never HTML.
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el: Element): void {
  el.replaceChildren();
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A status line that announces itself to screen readers. */
export function notice(kind: 'error' | 'ok' | 'info', text: string): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export function formatTime(ms: number | null | undefined): string {
  if (!ms) return '';
  return new Date(ms).toLocaleString();
}

/** Copies text, with a fallback for pages without the async clipboard (plain HTTP on some hosts). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h('textarea', { 'aria-hidden': 'true' }, text);
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/** A Copy button named `label` with a status beside it that says `copied` (or why it failed).
 * `text` is read at the click, so it may change after the button is made. */
export function copyButton(label: string, text: () => string, copied = 'Copied.'): HTMLElement {
  const said = h('span', { class: 'hint', role: 'status' });
  const copy = h('button', { type: 'button', 'aria-label': label }, 'Copy');
  copy.addEventListener('click', () => {
    copyText(text()).then(
      () => (said.textContent = ` ${copied}`),
      (error: unknown) => (said.textContent = ` ${errorText(error)}`),
    );
  });
  return h('span', {}, copy, said);
}

let nextId = 0;

/** A labelled form field; the hint describes the input (aria-describedby) without joining its name. */
export function field(label: string, input: HTMLElement, hint?: string, inline = false): HTMLElement {
  input.id ||= `f${++nextId}`;
  const hintEl = hint ? h('small', { class: 'hint', id: `${input.id}-hint` }, hint) : null;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: inline ? 'field inline' : 'field' }, h('label', { for: input.id }, label), input, hintEl);
}
