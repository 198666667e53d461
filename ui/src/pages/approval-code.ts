// The run's code on an approval card: folded around the line that makes the call (lib/call-code.ts),
// each line numbered, the call's line marked; a folded stretch expands on click.
import { callLines, callLinesNote, foldCode } from '../lib/call-code';
import { h } from '../lib/dom';

type Line = { number: number; text: string; marked: boolean };

function lineElement(line: Line): HTMLElement {
  return h(
    'span',
    { class: line.marked ? 'code-line marked' : 'code-line', 'data-line': String(line.number) },
    h('span', { class: 'line-number', 'aria-hidden': 'true' }, String(line.number)),
    h('span', { class: 'line-mark', 'aria-hidden': 'true' }, line.marked ? '▶' : ' '),
    h('span', { class: 'line-text' }, line.text === '' ? ' ' : line.text),
  );
}

/** The code section of the card for a call to `address` in a run whose code is `code`. */
export function callCodeElement(code: string, address: string): HTMLElement {
  const marked = callLines(code, address);
  const pre = h('pre', { class: 'call-code', 'aria-label': 'The run\u2019s code' });
  for (const segment of foldCode(code, marked)) {
    if (segment.kind === 'lines') {
      for (const line of segment.lines) pre.append(lineElement(line));
      continue;
    }
    const count = segment.to - segment.from + 1;
    const unfold = h(
      'button',
      { type: 'button', class: 'fold code-fold', 'aria-expanded': 'false' },
      `⋯ ${count} more line${count === 1 ? '' : 's'} (${segment.from}–${segment.to})`,
    );
    unfold.addEventListener('click', () => unfold.replaceWith(...segment.lines.map(lineElement)));
    pre.append(unfold);
  }
  return h(
    'section',
    { class: 'call-context' },
    h('h4', {}, 'The run\u2019s code'),
    h('p', { class: 'hint call-lines' }, callLinesNote(address, marked)),
    pre,
  );
}
