// The approval queue: the first pending approval (or the one picked) in full with its choices, the
// others listed below. Keys 1, 2 and 4 decide the one shown ("Always allow" is clicked only). With
// a `guard` (the desktop popup) the choices ignore keys and clicks for a moment after the window
// appears, is shown again or gets the focus, and after the call shown changes (lib/arming.ts).
// The card shown carries its run's code (fetched once per run; a direct call has none).
import type { Backend, Choice, PendingApproval } from '../backend/types';
import type { InputGuard } from '../lib/arming';
import { choiceForKey, decidedNote } from '../lib/choices';
import { clear, errorText, h, notice } from '../lib/dom';
import { approvalCard } from './approval-card';

export interface Queue {
  element: HTMLElement;
  show(pending: PendingApproval[]): void;
  /** Starts fetching the code of run `runId` (the popup knows its run before its approvals). */
  loadCode(runId: string): void;
  dispose(): void;
}

export function approvalQueue(
  backend: Backend,
  options: {
    onDecided: (choice: Choice) => Promise<void>;
    empty: string;
    guard?: InputGuard;
    /** What the card's run link does instead of following it. */
    openRun?: (runId: string) => void;
  },
): Queue {
  const guard = options.guard;
  const element = h('section', { class: 'queue', 'aria-live': 'polite' });
  const status = h('div', { class: 'status-line' });
  // Shows that the choices ignore input, and why a key or click did nothing. It sits right below
  // the choices, never above them: a note appearing above would move the buttons between a
  // click's press and release (the focus that click gives the window re-arms the guard), and the
  // click would land nowhere.
  const hold = h('div', { class: 'hold' });
  const body = h('div');
  element.append(status, body);
  let items: PendingApproval[] = [];
  let currentId: string | null = null;
  let busy = false;
  // The approval whose choices are on screen: another one there re-arms the guard.
  let shownId: string | null = null;
  let armTimer: ReturnType<typeof setTimeout> | undefined;
  // A key or click came while the choices ignored input: the note says so until they take it.
  let stray = false;
  // The code of each run asked about: a string, null when there is none to show (a direct call,
  // a run the hub no longer has), absent while it is being fetched.
  const codes = new Map<string, string | null>();
  const loading = new Set<string>();
  let disposed = false;

  const loadCode = (runId: string) => {
    if (codes.has(runId) || loading.has(runId) || runId === '') return;
    loading.add(runId);
    backend
      .run(runId)
      .then((run) => codes.set(runId, typeof run.code === 'string' && run.code !== '' ? run.code : null))
      .catch(() => codes.set(runId, null))
      .finally(() => {
        loading.delete(runId);
        // A new card only when it is the one on screen, and not while a decision is on its way.
        if (!disposed && !busy && current()?.runId === runId && codes.get(runId)) render();
      });
  };

  const current = (): PendingApproval | undefined =>
    items.find((p) => p.id === currentId) ?? items[0];

  const decide = async (choice: Choice) => {
    const pending = current();
    if (!pending || busy || pending.kind !== 'approval') return;
    if (guard && !guard.ready()) {
      stray = true;
      showArming();
      return;
    }
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

  /** Shows whether the choices take input: the buttons disabled while they do not, and
   * `data-armed` on the queue (the tests read it); enables them once the moment is over. Leaves
   * the rest of the card as it is (folds the person opened stay open). */
  const showArming = () => {
    if (!guard) return;
    clearTimeout(armTimer);
    const ready = guard.ready();
    element.dataset.armed = String(ready);
    for (const button of body.querySelectorAll<HTMLButtonElement>('.choices button')) {
      button.disabled = busy;
      if (ready) button.removeAttribute('aria-disabled');
      else button.setAttribute('aria-disabled', 'true');
    }
    clear(hold);
    if (ready) {
      stray = false;
      return;
    }
    hold.append(armingNote(guard.remainingMs(), stray));
    armTimer = setTimeout(showArming, guard.remainingMs() + 1);
  };

  const rearm = () => {
    guard?.rearm();
    showArming();
  };

  const render = () => {
    clear(body);
    const shown = current();
    if (shown && shown.id !== shownId) guard?.rearm();
    shownId = shown?.id ?? null;
    if (!shown) {
      body.append(h('p', { class: 'empty' }, options.empty));
      showArming();
      return;
    }
    const arming = !!guard && !guard.ready();
    loadCode(shown.runId);
    const code = codes.get(shown.runId) ?? undefined;
    body.append(approvalCard(shown, (choice) => void decide(choice), { busy, arming, code, openRun: options.openRun }));
    body.querySelector('.choices')?.after(hold);
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
    showArming();
  };

  const onKey = (event: KeyboardEvent) => {
    // Keys while the choices ignore input start the moment again: a burst of typing meant for
    // another window never reaches them, however long it goes on.
    if (guard && !guard.ready() && !MODIFIERS.has(event.key) && current()?.kind === 'approval') {
      event.preventDefault();
      stray = true;
      rearm();
      return;
    }
    const target = event.target as HTMLElement | null;
    const inField = !!target && ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
    const choice = choiceForKey({ key: event.key, ctrlKey: event.ctrlKey, metaKey: event.metaKey, altKey: event.altKey, inField });
    if (choice && current()?.kind === 'approval') {
      event.preventDefault();
      void decide(choice);
    }
  };
  document.addEventListener('keydown', onKey);
  // The popup shown again (after being hidden or minimised) or focused (the tray's "N pending
  // approvals", a click into it, a window manager's focus-follows-mouse) ignores input again.
  const onVisible = () => {
    if (document.visibilityState === 'visible') rearm();
  };
  if (guard) {
    window.addEventListener('focus', rearm);
    document.addEventListener('visibilitychange', onVisible);
  }

  return {
    element,
    show(pending) {
      items = pending;
      if (currentId && !items.some((p) => p.id === currentId)) currentId = null;
      render();
    },
    loadCode,
    dispose() {
      disposed = true;
      document.removeEventListener('keydown', onKey);
      window.removeEventListener('focus', rearm);
      document.removeEventListener('visibilitychange', onVisible);
      clearTimeout(armTimer);
    },
  };
}

const MODIFIERS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock']);

/** What the popup shows while its choices ignore input: a bar that empties as the moment runs
 * out, and, after a stray key or click, why it did nothing. */
function armingNote(remainingMs: number, stray: boolean): HTMLElement {
  const bar = h('span', { class: 'arming-bar' });
  bar.style.animationDuration = `${Math.max(0, Math.round(remainingMs))}ms`;
  return h(
    'div',
    { class: 'arming', role: 'status' },
    h('span', { class: 'arming-track', 'aria-hidden': 'true' }, bar),
    stray
      ? 'Not yet: wait a moment. The choices take input a moment after this window appears or gets the focus, so a click or key meant for another window cannot decide.'
      : 'The choices take input in a moment.',
  );
}
