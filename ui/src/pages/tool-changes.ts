// The review of tool definitions (docs/pinning.md), on the Tools page: each tool whose definition
// changed since you approved it shows what changed, part by part, old lines against new ones,
// with Accept (the new definition becomes the approved one) and Block (hidden and refused until
// you accept it). Tools that appeared later in a source you trust, and blocked ones, are listed
// too. Until you decide, every call of a changed tool asks you.
import type { DefinitionPart, PinnedDefinition, ToolChange } from '../backend/types';
import { h } from '../lib/dom';
import { lineDiff } from '../lib/line-diff';

const PART_NAMES: Record<DefinitionPart, string> = {
  title: 'Title',
  description: 'Description',
  inputSchema: 'Input schema',
  outputSchema: 'Output schema',
  annotations: 'Annotations',
  other: 'Other members (_meta, icons, …)',
};

/** One part of a definition as lines: text as written, JSON indented. */
function partLines(definition: PinnedDefinition, part: DefinitionPart): string[] {
  const value = definition[part];
  if (value === undefined || value === null) return ['(none)'];
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return text.split('\n');
}

function partDiff(change: ToolChange, part: DefinitionPart): HTMLElement {
  const before = change.state === 'new' ? [] : partLines(change.approved, part);
  const lines = lineDiff(before, partLines(change.now, part)).map((line) => {
    const sign = line.kind === 'del' ? '- ' : line.kind === 'add' ? '+ ' : '  ';
    return h('span', { class: line.kind === 'same' ? 'diff-line' : `diff-${line.kind}` }, sign + line.text);
  });
  return h(
    'div',
    { class: 'definition-part', 'data-part': part },
    h('h4', {}, PART_NAMES[part]),
    h('pre', { class: 'preview diff', 'aria-label': `${PART_NAMES[part]} of ${change.address}: approved and now` }, h('code', {}, lines)),
  );
}

function summary(change: ToolChange): string {
  switch (change.state) {
    case 'changed':
      return `You approved it when your policy said ${change.approvedDecision}; the new definition alone would say ${change.nowDecision}. Until you accept or block it, every call asks you.`;
    case 'new':
      return `It appeared after you first saw its source. Your policy says ${change.nowDecision}.`;
    case 'blocked':
      return 'You blocked it: it is hidden and every call is refused until you accept it.';
  }
}

const STATE_TEXT: Record<ToolChange['state'], string> = {
  changed: 'changed',
  new: 'new',
  blocked: 'blocked',
};

/** The card, or null when every tool is as you approved it. */
export function toolChangesSection(
  changes: ToolChange[],
  actions: { accept(address: string): void; block(address: string): void },
): HTMLElement | null {
  if (!changes.length) return null;
  const item = (change: ToolChange) => {
    const parts: DefinitionPart[] = change.state === 'new' ? ['description', 'annotations'] : change.parts;
    return h(
      'article',
      { class: 'tool-change', 'data-change': change.address },
      h(
        'h3',
        {},
        h('code', {}, change.address),
        h('span', { class: `badge ${change.state === 'blocked' ? 'deny' : 'ask'}` }, STATE_TEXT[change.state]),
      ),
      h('p', {}, summary(change)),
      parts.map((part) => partDiff(change, part)),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'primary', 'aria-label': `Accept the definition of ${change.address}`, onclick: () => actions.accept(change.address) }, 'Accept'),
        change.state === 'blocked'
          ? null
          : h('button', { type: 'button', class: 'danger', 'aria-label': `Block ${change.address}`, onclick: () => actions.block(change.address) }, 'Block'),
      ),
    );
  };
  return h(
    'section',
    { class: 'card held tool-changes', role: 'region', 'aria-label': 'Tool definitions waiting for your review' },
    h('h3', {}, 'Tool definitions waiting for your review'),
    h('p', {}, 'A source changed how it describes these tools since you approved them, or added them later. The hub keeps judging each by what you approved; lines you approved are marked −, new ones +.'),
    changes.map(item),
  );
}
