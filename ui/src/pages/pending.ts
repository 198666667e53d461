// Pending approvals, with the "pause approvals" toggle (new asks are denied until resumed).
import { errorText, h, notice, clear } from '../lib/dom';
import type { Page, PageContext } from './page';
import { approvalQueue } from './queue';

export function pendingPage({ backend }: PageContext): Page {
  const message = h('div');
  const pause = h('input', { type: 'checkbox', id: 'pause-approvals' });
  const queue = approvalQueue(backend, {
    onDecided: async () => refresh(),
    empty: 'Nothing is waiting for you.',
  });
  pause.addEventListener('change', async () => {
    clear(message);
    try {
      await backend.pauseApprovals(pause.checked);
    } catch (error) {
      pause.checked = !pause.checked;
      message.append(notice('error', errorText(error)));
    }
  });
  const element = h(
    'section',
    {},
    h('h2', {}, 'Pending approvals'),
    h(
      'p',
      { class: 'toggle' },
      pause,
      h('label', { for: 'pause-approvals' }, 'Pause approvals'),
      h('span', { class: 'hint' }, ' — while paused, new calls that ask are denied.'),
    ),
    h('p', { class: 'hint' }, 'Keys 1–4 choose for the call shown.'),
    message,
    queue.element,
  );
  const refresh = async () => {
    try {
      const view = await backend.approvals();
      pause.checked = view.paused;
      queue.show(view.pending);
    } catch (error) {
      clear(message);
      message.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Pending', element, refresh, dispose: () => queue.dispose() };
}
