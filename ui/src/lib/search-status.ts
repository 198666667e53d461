// How the hub's own search ranks (issue 20): by meaning and terms once the model has embedded
// every tool, by terms only without the model. `GET /api/config` says (`search`); the Tools page
// shows it as one line under its search box and, while the model embeds new tools, asks again
// every 2 s until it is done, off or failed. The pure parts (the line, the polling loop) come
// first and are tested without a DOM; the element is last.
import type { HubConfig, SearchStatus } from '../backend/types';
import { clear, h, notice } from './dom';

/** How often the page asks again while the hub embeds tools. */
export const SEARCH_STATUS_POLL_MS = 2000;

/** What the page shows for a status. */
export interface SearchStatusLine {
  kind: 'info' | 'error';
  text: string;
  /** While embedding: tools with a vector of all tools (`value` absent: not counted yet). */
  progress?: { value?: number; max: number };
}

const count = (n: number) => n.toLocaleString('en-US');

/** `text` as the end of a sentence: one line, a capital first, one full stop last. */
function sentence(text: string, capital = false): string {
  const line = text.replace(/\s+/g, ' ').trim().replace(/[.\s]+$/, '');
  const first = capital ? line.charAt(0).toUpperCase() : line.charAt(0);
  return `${first}${line.slice(1)}.`;
}

/** The line for `status`; `null` for a state this page does not know (a newer hub). */
export function searchStatusLine(status: SearchStatus): SearchStatusLine | null {
  switch (status.state) {
    case 'on':
      return { kind: 'info', text: `Search: by meaning and terms (${count(status.tools)} tool${status.tools === 1 ? '' : 's'})` };
    case 'embedding':
      // `0 of 0`: the model is loading and has not counted the catalog yet.
      return status.total > 0
        ? {
            kind: 'info',
            text: `Search: embedding tools for search by meaning — ${count(status.done)} of ${count(status.total)}`,
            progress: { value: Math.min(status.done, status.total), max: status.total },
          }
        : { kind: 'info', text: 'Search: embedding tools for search by meaning', progress: { max: 1 } };
    case 'off':
      return {
        kind: 'info',
        text: `Search: terms only — ${sentence(status.reason)}${status.fix ? ` ${sentence(status.fix, true)}` : ''}`,
      };
    case 'failed':
      return { kind: 'error', text: `Search: terms only — the search model failed: ${sentence(status.error)}` };
    default:
      return null;
  }
}

export interface SearchStatusWatchOptions {
  intervalMs?: number;
  setTimer?: (run: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

export interface SearchStatusWatch {
  /** Asks the hub now; while it embeds, again every `intervalMs` until it is done. */
  refresh(): Promise<void>;
  /** Stops asking (the page is gone); an answer still on its way is dropped. */
  stop(): void;
}

/**
 * Shows the hub's search status (`null`: the hub does not say, an older hub) and polls only
 * while it is `embedding`. A failed request keeps what is shown, and the polling if the hub
 * was embedding. One timer at most: a refresh from outside (a live update) replaces it.
 */
export function watchSearchStatus(
  load: () => Promise<HubConfig>,
  show: (status: SearchStatus | null) => void,
  options: SearchStatusWatchOptions = {},
): SearchStatusWatch {
  const intervalMs = options.intervalMs ?? SEARCH_STATUS_POLL_MS;
  const setTimer = options.setTimer ?? ((run, ms) => setTimeout(run, ms));
  const clearTimer = options.clearTimer ?? ((timer) => clearTimeout(timer as ReturnType<typeof setTimeout>));
  let timer: unknown = null;
  let stopped = false;
  let asked = 0;
  let embedding = false;

  const cancel = () => {
    if (timer !== null) clearTimer(timer);
    timer = null;
  };
  const refresh = async () => {
    if (stopped) return;
    cancel();
    // Only the latest request's answer counts: an older one arriving late is dropped.
    const mine = ++asked;
    let status: SearchStatus | null | undefined;
    try {
      status = (await load()).search ?? null;
    } catch {
      status = undefined;
    }
    if (stopped || mine !== asked) return;
    if (status !== undefined) {
      show(status);
      embedding = status?.state === 'embedding';
    }
    if (embedding) {
      timer = setTimer(() => {
        timer = null;
        void refresh();
      }, intervalMs);
    }
  };
  return {
    refresh,
    stop() {
      stopped = true;
      cancel();
    },
  };
}

/** The element that shows the line: empty until the hub says. */
export function searchStatusView(): { element: HTMLElement; show(status: SearchStatus | null): void } {
  const element = h('div', { class: 'search-status' });
  let shown = '';
  return {
    element,
    show(status) {
      const line = status ? searchStatusLine(status) : null;
      const key = line ? `${line.kind} ${line.text} ${line.progress?.value ?? ''}` : '';
      if (key === shown) return;
      shown = key;
      clear(element);
      if (!line) return;
      if (line.kind === 'error') {
        element.append(notice('error', line.text));
        return;
      }
      const progress = line.progress
        ? h('progress', { max: line.progress.max, value: line.progress.value, 'aria-label': 'Tools embedded for search by meaning' })
        : null;
      element.append(h('p', { class: 'search-status-line' }, h('span', {}, line.text), progress));
    },
  };
}
