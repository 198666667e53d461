import { describe, expect, it } from 'vitest';

import { lineDiff } from './line-diff';

describe('lineDiff', () => {
  it('keeps shared lines once and marks removed before added', () => {
    expect(lineDiff(['{', '  "a": 1', '}'], ['{', '  "b": 2', '}'])).toEqual([
      { kind: 'same', text: '{' },
      { kind: 'del', text: '  "a": 1' },
      { kind: 'add', text: '  "b": 2' },
      { kind: 'same', text: '}' },
    ]);
  });

  it('shows a text that appeared as added only', () => {
    expect(lineDiff([], ['new'])).toEqual([{ kind: 'add', text: 'new' }]);
  });
});
