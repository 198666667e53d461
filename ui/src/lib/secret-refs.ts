// `${secret:NAME}` references between sources and connections: which fields a source's
// definition refers to, which stored fields no source uses, and the "insert a reference" list the
// source form offers under Environment and Headers.
import type { Backend, Connection, SourceDefinition, SourceStatus } from '../backend/types';
import { h } from './dom';

const REFERENCE = /\$\{secret:([A-Za-z0-9_-]{1,64})\}/g;

/** The `${secret:NAME}` names in a source's env and headers values. */

/** The field of an OAuth sign-in (its token set): never a `${secret:…}` value. */
const OAUTH_FIELD = 'oauth';
export function referencedSecrets(def: SourceDefinition | null | undefined): Set<string> {
  const names = new Set<string>();
  for (const value of [...Object.values(def?.env ?? {}), ...Object.values(def?.headers ?? {})]) {
    for (const match of value.matchAll(REFERENCE)) names.add(match[1]!);
  }
  return names;
}

/** The fields of `connection` its source does not refer to (stored, but never used). */
export function unusedFields(connection: Connection, sources: SourceStatus[]): string[] {
  const source = sources.find((s) => s.id === connection.source);
  if (!source?.def) return [];
  const used = referencedSecrets(source.def);
  return (connection.fields ?? []).filter((f) => f !== OAUTH_FIELD && !used.has(f));
}

/** `text` with a reference to `field` at `caret`: a whole `NAME=…` (env) or `Name: …` (headers)
 *  line when the caret starts a line, else the reference alone. Returns the text and the caret. */
export function withReference(text: string, caret: number, field: string, kind: 'env' | 'headers'): { text: string; caret: number } {
  const reference = `\${secret:${field}}`;
  const lineStart = caret === 0 || text[caret - 1] === '\n';
  let insert = reference;
  if (lineStart) insert = kind === 'env' ? `${field}=${reference}` : `${field}: ${reference}`;
  if (lineStart && caret < text.length && text[caret] !== '\n') insert += '\n';
  return { text: text.slice(0, caret) + insert + text.slice(caret), caret: caret + insert.length };
}

/** The list under the source form: one button per connection field; `update(id)` reloads it for
 *  the source being edited (its own connections) or a new one (every field, with a note). */
export function secretRefOffers(backend: Backend, env: HTMLTextAreaElement, headers: HTMLTextAreaElement) {
  const element = h('div', { class: 'field secret-refs', hidden: true });
  const insert = (field: string) => {
    const target = env.offsetParent !== null ? env : headers;
    const kind = target === env ? 'env' : 'headers';
    const caret = target.selectionStart ?? target.value.length;
    const next = withReference(target.value, caret, field, kind);
    target.value = next.text;
    target.focus();
    target.setSelectionRange(next.caret, next.caret);
  };
  const update = async (sourceId: string | null) => {
    let connections: Connection[] = [];
    try {
      connections = await backend.connections();
    } catch {
      connections = [];
    }
    const own = sourceId ? connections.filter((c) => c.source === sourceId) : connections;
    const fields = [...new Set(own.flatMap((c) => c.fields ?? []))].filter((f) => f !== OAUTH_FIELD).sort();
    element.replaceChildren();
    element.hidden = fields.length === 0;
    if (!fields.length) return;
    element.append(
      h('span', { class: 'hint' }, 'Insert a secret reference: '),
      ...fields.map((f) => h('button', { type: 'button', class: 'link', onclick: () => insert(f) }, `\${secret:${f}}`)),
      h(
        'small',
        { class: 'hint' },
        sourceId
          ? ' Fields of this source\'s connections.'
          : ' Fields of existing connections; a new source reads its own connection, so set one for it on the Connections page.',
      ),
    );
  };
  return { element, update };
}
