// One pending approval: the client that asks, address, source, connection, reason (in plain words),
// the preview (formatted JSON, long values folded, paths and commands with their end in view), the
// run's code with the call's line marked (when it is known), and the four choices with their
// shortcuts (none for "Always allow"). Used by the Pending page and the approval view.
import type { Choice, PendingApproval } from '../backend/types';
import { plainReason } from '../lib/call-code';
import { CHOICES } from '../lib/choices';
import { h, formatTime } from '../lib/dom';
import { foldPreview } from '../lib/preview';
import { callCodeElement } from './approval-code';

/** What a fold's button says beside the folded text: visible words, not a tooltip, which would
 * cover the very text the person reads. */
const SHOW_ALL = 'show all';
const FOLD = 'fold';

export function previewElement(value: unknown): HTMLElement {
  const pre = h('pre', { class: 'preview', 'aria-label': 'Arguments (redacted preview)' });
  for (const segment of foldPreview(value)) {
    if ('text' in segment) {
      pre.append(segment.text);
      continue;
    }
    const value = h('span', { class: 'fold-text' }, segment.short);
    const hint = h('span', { class: 'fold-hint' }, SHOW_ALL);
    const fold = h('button', { type: 'button', class: 'fold', 'aria-expanded': 'false' }, value, hint);
    fold.addEventListener('click', () => {
      const open = fold.getAttribute('aria-expanded') === 'true';
      fold.setAttribute('aria-expanded', String(!open));
      value.textContent = open ? segment.short : segment.full;
      hint.textContent = open ? SHOW_ALL : FOLD;
    });
    pre.append(fold);
  }
  return pre;
}

export function approvalCard(
  pending: PendingApproval,
  onDecide: (choice: Choice) => void,
  /** `busy`: a decision is on its way. `arming`: the popup's choices ignore input for a moment
   * (lib/arming.ts); the buttons show it by looking unavailable (`aria-disabled`) until then. `code`: the run's code,
   * when known. `openRun`: what the run link does instead of leaving the page (the popup opens the
   * run in the settings window and stays, with its choices). */
  options: { busy?: boolean; arming?: boolean; code?: string; openRun?: (runId: string) => void } = {},
): HTMLElement {
  const isConnection = pending.kind === 'connection';
  const runLink = h('a', { href: `#/runs/${encodeURIComponent(pending.runId)}` }, h('code', {}, pending.runId));
  const openRun = options.openRun;
  if (openRun) {
    runLink.addEventListener('click', (event) => {
      event.preventDefault();
      openRun(pending.runId);
    });
  }
  const details = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Client'),
    h('dd', { class: 'client' }, pending.client ?? 'not named (the client did not introduce itself)'),
    h('dt', {}, 'Tool'),
    h('dd', {}, h('code', {}, pending.address)),
    h('dt', {}, 'Source'),
    h('dd', {}, pending.source),
    pending.connection ? [h('dt', {}, 'Connection'), h('dd', {}, pending.connection)] : null,
    h('dt', {}, 'Reason'),
    h('dd', {}, plainReason(pending.reason)),
    h('dt', {}, 'Run'),
    h('dd', {}, runLink),
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
  // The code comes after the choices, so that they are in view without scrolling in the popup.
  const code = options.code ? callCodeElement(options.code, pending.address) : null;
  if (isConnection) {
    card.append(
      h('p', {}, 'Add the connection on the ', h('a', { href: '#/connections' }, 'Connections'), ' page, then resume the run from your AI client.'),
    );
    if (code) card.append(code);
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
        // While arming the button still takes the click, so the queue can say "not yet" instead
        // of a click that silently does nothing; it only looks and reads as unavailable.
        disabled: options.busy ?? false,
        'aria-disabled': options.arming ? 'true' : null,
      },
      info.title(pending.address),
    );
    if (info.key) button.append(h('kbd', { 'aria-hidden': 'true' }, info.key));
    button.setAttribute('aria-label', info.title(pending.address));
    button.addEventListener('click', () => onDecide(info.choice));
    buttons.append(button);
  }
  card.append(buttons);
  if (code) card.append(code);
  return card;
}
