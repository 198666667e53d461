// `#/approve/<runId>`: only that run's pending approvals, for the desktop popup window. Escape closes
// the popup without deciding (what waits stays pending; the tray's "N pending approvals" shows it
// again); the run link opens the run in the settings window and the popup stays. `#/approve/` with
// no run is the app's warm popup: hidden, loaded ahead of time, it tells the app it is ready and
// shows nothing until the app points it at a run.
import { InputGuard } from '../lib/arming';
import { clear, errorText, h, notice } from '../lib/dom';
import type { Page, PageContext } from './page';
import { approvalQueue } from './queue';

export const DECIDED = 'Decided. You can close this window.';

export function approvePage({ backend, route }: PageContext): Page {
  const runId = route.params[0] ?? '';
  const message = h('div');
  let decidedAny = false;
  let reportedShown = false;
  let reportedReady = false;
  const queue = approvalQueue(backend, {
    onDecided: async () => {
      decidedAny = true;
      await refresh();
    },
    empty: 'Nothing is waiting for this run.',
    // In the app this view is the popup that comes up on its own, on top of whatever the person
    // is typing into: its choices ignore input for a moment (lib/arming.ts). In a browser the
    // person opened the page themselves, and nothing pops up.
    guard: backend.kind === 'tauri' ? new InputGuard() : undefined,
    openRun: (id) => {
      void backend
        .openRun(id)
        .then((opened) => {
          if (!opened) location.hash = `#/runs/${encodeURIComponent(id)}`;
        })
        .catch((error: unknown) => {
          clear(message);
          message.append(notice('error', errorText(error)));
        });
    },
  });
  queue.loadCode(runId);
  const element = h(
    'section',
    { class: 'approve-view' },
    h('h2', {}, 'Approve a call'),
    message,
    runId === '' ? null : queue.element,
    runId !== '' && backend.kind === 'tauri'
      ? h('p', { class: 'hint' }, 'Esc closes this window without deciding; the call keeps waiting.')
      : null,
  );
  const onKey = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.defaultPrevented) return;
    event.preventDefault();
    void backend.closeWindow().catch(() => {});
  };
  document.addEventListener('keydown', onKey);
  const refresh = async () => {
    if (runId === '') {
      if (!reportedReady) {
        reportedReady = true;
        await backend.popupReady().catch(() => {});
      }
      return;
    }
    try {
      const view = await backend.approvals();
      const mine = view.pending.filter((p) => p.runId === runId);
      queue.show(mine);
      if (mine.length > 0 && !reportedShown) {
        reportedShown = true;
        // The paint's own time: the report's trip to the app is no part of the wait.
        afterPaint(() => void backend.popupShown(runId, Date.now()).catch(() => {}));
      }
      clear(message);
      if (mine.length === 0 && decidedAny) {
        message.append(notice('ok', DECIDED));
        await backend.closeWindow();
      }
    } catch (error) {
      clear(message);
      message.append(notice('error', errorText(error)));
    }
  };
  return {
    title: 'Approve',
    element,
    refresh,
    dispose: () => {
      document.removeEventListener('keydown', onKey);
      queue.dispose();
    },
  };
}

/** Runs `then` once the frame showing what was just rendered has been painted: the callback of
 * the next animation frame runs before that frame's paint, the one after it only once it is done. */
function afterPaint(then: () => void): void {
  requestAnimationFrame(() => requestAnimationFrame(then));
}
