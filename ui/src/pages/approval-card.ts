// One pending approval: address, source, connection, reason, the preview (formatted JSON, long values
// folded), and the four choices with their shortcuts (none for "Always allow"). Used by the Pending
// page and the approval view.
import type { Choice, PendingApproval } from '../backend/types';
import { CHOICES } from '../lib/choices';
import { h, formatTime } from '../lib/dom';
import { foldPreview } from '../lib/preview';

export function previewElement(value: unknown): HTMLElement {
  const pre = h('pre', { class: 'preview', 'aria-label': 'Arguments (redacted preview)' });
  for (const segment of foldPreview(value)) {
    if ('text' in segment) {
      pre.append(segment.text);
      continue;
    }
    const fold = h(
      'button',
      { type: 'button', class: 'fold', 'aria-expanded': 'false', title: 'Show the whole value' },
      segment.short,
    );
    fold.addEventListener('click', () => {
      const open = fold.getAttribute('aria-expanded') === 'true';
      fold.setAttribute('aria-expanded', String(!open));
      fold.textContent = open ? segment.short : segment.full;
      fold.title = open ? 'Show the whole value' : 'Fold';
    });
    pre.append(fold);
  }
  return pre;
}

export function approvalCard(
  pending: PendingApproval,
  onDecide: (choice: Choice) => void,
  /** `busy`: a decision is on its way. `arming`: the popup's choices ignore input for a moment
   * (lib/arming.ts); the buttons show it by being disabled until then. */
  options: { busy?: boolean; arming?: boolean } = {},
): HTMLElement {
  const isConnection = pending.kind === 'connection';
  const details = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Tool'),
    h('dd', {}, h('code', {}, pending.address)),
    h('dt', {}, 'Source'),
    h('dd', {}, pending.source),
    pending.connection ? [h('dt', {}, 'Connection'), h('dd', {}, pending.connection)] : null,
    h('dt', {}, 'Reason'),
    h('dd', {}, pending.reason),
    h('dt', {}, 'Run'),
    h('dd', {}, h('a', { href: `#/runs/${encodeURIComponent(pending.runId)}` }, h('code', {}, pending.runId))),
    h('dt', {}, 'Expires'),
    h('dd', {}, formatTime(pending.expiresAtMs)),
  );
  const card = h(
    'article',
    { class: 'card approval', 'data-approval': pending.id, 'aria-label': `Pending call to ${pending.address}` },
    h('h3', {}, isConnection ? `Connection needed for ${pending.address}` : pending.address),
    details,
    previewElement(pending.preview),
  );
  if (isConnection) {
    card.append(
      h('p', {}, 'Add the connection on the ', h('a', { href: '#/connections' }, 'Connections'), ' page, then resume the run from your AI client.'),
    );
    return card;
  }
  const buttons = h('div', { class: 'choices', role: 'group', 'aria-label': 'Decide' });
  for (const info of CHOICES) {
    const button = h(
      'button',
      {
        type: 'button',
        class: info.choice === 'deny' ? 'danger' : info.choice === 'approve_once' ? 'primary' : '',
        'aria-keyshortcuts': info.key,
        'data-choice': info.choice,
        disabled: (options.busy ?? false) || (options.arming ?? false),
      },
      info.title(pending.address),
    );
    if (info.key) button.append(h('kbd', { 'aria-hidden': 'true' }, info.key));
    button.setAttribute('aria-label', info.title(pending.address));
    button.addEventListener('click', () => onDecide(info.choice));
    buttons.append(button);
  }
  card.append(buttons);
  return card;
}
