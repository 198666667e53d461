// A source's live log: the server's stderr and the hub's lines about it, polled from
// `GET /api/sources/<id>/logs?after=<next>` while the page is open. The panel keeps at most
// MAX_DOM_LINES lines (the oldest go, and are counted), follows new lines unless the person
// scrolled up, and shows text only as text.
import type { Backend, SourceLogLine } from '../backend/types';
import { errorText, h } from '../lib/dom';

/** As many lines as the hub keeps per source. */
export const MAX_DOM_LINES = 500;
const POLL_MS = 1000;

export interface LogPanel {
  element: HTMLElement;
  dispose(): void;
}

function lineElement(line: SourceLogLine): HTMLElement {
  const at = new Date(line.at);
  const time = at.toLocaleTimeString(undefined, { hour12: false });
  return h(
    'div',
    { class: `log-line log-${line.level} log-${line.stream}`, 'data-seq': line.seq, 'data-stream': line.stream },
    h('time', { datetime: at.toISOString(), title: at.toLocaleString() }, time),
    ' ',
    h('span', { class: 'log-stream' }, line.stream === 'stderr' ? 'stderr' : 'hub'),
    ' ',
    line.level === 'info' ? null : h('span', { class: 'log-level' }, `${line.level} `),
    line.text,
  );
}

export function sourceLogPanel(backend: Backend, sourceId: string): LogPanel {
  const lines = h('div', { class: 'log', role: 'log', 'aria-label': `Log of ${sourceId}`, tabindex: '0' });
  const status = h('p', { class: 'hint log-status' });
  const empty = h('p', { class: 'empty' }, 'Nothing logged yet.');
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'log-heading' },
    h('h3', { id: 'log-heading' }, 'Log'),
    h('p', { class: 'hint' }, 'What the server writes to stderr and what the hub says about it, live. Known secrets are shown as [redacted]; the hub keeps the last 500 lines in memory.'),
    status,
    empty,
    lines,
  );
  let next = 0;
  let busy = false;
  let stopped = false;

  const showStatus = (problem?: string) => {
    const parts: string[] = [];
    // Lines are numbered from 1: those before the first one shown were dropped by the hub's
    // ring or by this panel's bound.
    const first = Number((lines.firstElementChild as HTMLElement | null)?.dataset.seq ?? next + 1);
    const older = Math.max(0, first - 1);
    if (older) parts.push(`${older} older line${older === 1 ? '' : 's'} not shown.`);
    if (problem) parts.push(`Could not read the log: ${problem}`);
    status.textContent = parts.join(' ');
    status.hidden = parts.length === 0;
  };

  const poll = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      const page = await backend.sourceLogs(sourceId, next);
      if (stopped) return;
      // A restarted hub numbers from 1 again: start over.
      if (page.next < next) {
        lines.replaceChildren();
        next = 0;
        busy = false;
        return void (await poll());
      }
      const follow = lines.scrollTop + lines.clientHeight >= lines.scrollHeight - 8;
      const fresh = page.lines.filter((l) => l.seq > next).slice(-MAX_DOM_LINES);
      lines.append(...fresh.map(lineElement));
      while (lines.childElementCount > MAX_DOM_LINES) lines.firstElementChild?.remove();
      next = Math.max(next, page.next);
      empty.hidden = lines.childElementCount > 0;
      if (follow && fresh.length) lines.scrollTop = lines.scrollHeight;
      showStatus();
    } catch (error) {
      showStatus(errorText(error));
    } finally {
      busy = false;
    }
  };

  void poll();
  const timer = setInterval(() => void poll(), POLL_MS);
  return {
    element,
    dispose() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
