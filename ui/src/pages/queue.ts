// The approval queue: the first pending approval (or the one picked) in full with its choices, the
// others listed below. Keys 1–4 decide the one shown.
import type { Backend, Choice, PendingApproval } from '../backend/types';
import { choiceForKey, decidedNote } from '../lib/choices';
import { clear, errorText, h, notice } from '../lib/dom';
import { approvalCard } from './approval-card';

export interface Queue {
  element: HTMLElement;
  show(pending: PendingApproval[]): void;
  dispose(): void;
}

export function approvalQueue(
  backend: Backend,
  options: { onDecided: (choice: Choice) => Promise<void>; empty: string },
): Queue {
  const element = h('section', { class: 'queue', 'aria-live': 'polite' });
  const status = h('div', { class: 'status-line' });
  const body = h('div');
  element.append(status, body);
  let items: PendingApproval[] = [];
  let currentId: string | null = null;
  let busy = false;

  const current = (): PendingApproval | undefined =>
    items.find((p) => p.id === currentId) ?? items[0];

  const decide = async (choice: Choice) => {
    const pending = current();
    if (!pending || busy || pending.kind !== 'approval') return;
    busy = true;
    render();
    try {
      await backend.decide({ approvalId: pending.id }, choice);
      items = items.filter((p) => p.id !== pending.id);
      currentId = null;
      clear(status);
      status.append(notice('ok', `${decidedNote(choice)} ${pending.address}`));
      busy = false;
      render();
      await options.onDecided(choice);
    } catch (error) {
      busy = false;
      clear(status);
      status.append(notice('error', errorText(error)));
      render();
    }
  };

  const render = () => {
    clear(body);
    const shown = current();
    if (!shown) {
      body.append(h('p', { class: 'empty' }, options.empty));
      return;
    }
    body.append(approvalCard(shown, (choice) => void decide(choice), { busy }));
    const rest = items.filter((p) => p !== shown);
    if (rest.length) {
      body.append(
        h('h3', {}, `Queue: ${rest.length} more waiting`),
        h(
          'ul',
          { class: 'queue-list' },
          rest.map((p) =>
            h(
              'li',
              {},
              h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  onclick: () => {
                    currentId = p.id;
                    render();
                  },
                },
                p.address,
              ),
              ` · ${p.source}${p.connection ? ` · ${p.connection}` : ''} · run ${p.runId}`,
            ),
          ),
        ),
      );
    }
  };

  const onKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement | null;
    const inField = !!target && ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
    const choice = choiceForKey({ key: event.key, ctrlKey: event.ctrlKey, metaKey: event.metaKey, altKey: event.altKey, inField });
    if (choice && current()?.kind === 'approval') {
      event.preventDefault();
      void decide(choice);
    }
  };
  document.addEventListener('keydown', onKey);

  return {
    element,
    show(pending) {
      items = pending;
      if (currentId && !items.some((p) => p.id === currentId)) currentId = null;
      render();
    },
    dispose() {
      document.removeEventListener('keydown', onKey);
    },
  };
}
