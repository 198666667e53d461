// The "Kept results" section of a run's detail: each handle the run's envelope named, and its first
// 16 KB on request (read as `hub.read(handle, { length })` reads for the model; redacted like all
// history).
import type { Backend, RunDetail } from '../backend/types';
import { clear, errorText, h, notice } from '../lib/dom';
import { envelopeHandles, handleRows, sizeText } from '../lib/handles';

export function keptResultsSection(backend: Backend, run: RunDetail): HTMLElement[] {
  const rows = handleRows(envelopeHandles(run.envelope), run.keptHandles);
  if (!rows.length) return [];
  const shown = h('div');
  const show = async (handle: string) => {
    clear(shown);
    try {
      const piece = await backend.runHandle(run.id, handle);
      const text = typeof piece.data === 'string' ? piece.data : JSON.stringify(piece.data);
      const of = piece.next === null ? 'all of it' : `the first ${sizeText(piece.next)} of ${sizeText(piece.total)}`;
      shown.append(h('p', {}, h('code', {}, handle), `: ${of}`), h('pre', { class: 'code preview', 'aria-label': `Kept result ${handle}` }, text));
    } catch (error) {
      shown.append(notice('error', errorText(error)));
    }
  };
  return [
    h('h3', {}, 'Kept results'),
    h('p', { class: 'hint' }, 'Too large to return inline, so kept whole for a day: the model reads them in pieces with hub.read(handle) in its next execute.'),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ['Handle', 'What', 'Size', 'Shape', ''].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, h('code', {}, r.handle)),
            h('td', {}, r.what),
            h('td', { class: 'num' }, r.size),
            h('td', {}, r.preview),
            h('td', {}, r.kept ? h('button', { type: 'button', onclick: () => void show(r.handle) }, 'Show') : h('span', { class: 'badge' }, 'no longer kept')),
          ),
        ),
      ),
    ),
    shown,
  ];
}
