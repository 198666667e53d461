// A source's state as a person reads it: a badge in words (the hub's raw state stays in
// `data-state` and the badge's class), and for a source that waits for a secret, the way to the
// form that stores it instead of the hub's CLI sentence.
import type { SourceStatus } from '../backend/types';
import { h } from './dom';
import { referencedSecrets } from './secret-refs';
import { usesOAuth } from './sign-in';

/** The badge's words for a state. */
export function stateLabel(s: SourceStatus): string {
  switch (s.state) {
    case 'needs_connection':
      return usesOAuth(s) ? 'needs sign-in' : 'needs a secret';
    case 'needs_confirmation':
      return 'needs your confirmation';
    default:
      return s.state;
  }
}

export function stateBadge(s: SourceStatus): HTMLElement {
  return h('span', { class: `badge state-${s.state}`, 'data-state': s.state }, stateLabel(s));
}

/** Whether the source waits for a static secret (not an OAuth sign-in). */
export function needsSecret(s: SourceStatus): boolean {
  return s.state === 'needs_connection' && !usesOAuth(s);
}

/** `#/connections?source=…&field=…`: the Connections form for the source's first secret. */
export function secretFormHref(s: SourceStatus): string {
  const params = new URLSearchParams({ source: s.id });
  const [field] = [...referencedSecrets(s.def)];
  if (field) params.set('field', field);
  return `#/connections?${params.toString()}`;
}

/** What a source that waits for a secret shows where its error would be. */
export function secretNeeded(s: SourceStatus): HTMLElement {
  return h(
    'span',
    { class: 'needs-secret' },
    'It needs a secret before it can start. ',
    h('a', { class: 'button primary', href: secretFormHref(s), 'aria-label': `Add the secret of ${s.id}` }, 'Add the secret'),
  );
}

/** A command line or URL in at most `max` characters (code points) for a table cell: its start
 * (the program) and its end (the script or the last arguments), with "…" between. The whole text
 * stays in the cell's title and on the source's own page. */
export function shortTarget(text: string, max = 64): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = Math.floor((max - 1) * 0.4);
  const tail = max - 1 - head;
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - tail).join('')}`;
}
