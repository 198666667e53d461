import { describe, expect, it } from 'vitest';
import { CHOICES, choiceForKey, decidedNote } from './choices';

describe('choices', () => {
  it('maps keys 1, 2 and 4 to approve once, for the run, and deny', () => {
    expect(['1', '2', '4'].map((key) => choiceForKey({ key }))).toEqual(['approve_once', 'approve_run', 'deny']);
  });

  it('has no key for "Always allow": a permanent rule is never one keystroke (issue 14)', () => {
    expect(choiceForKey({ key: '3' })).toBeNull();
    expect(CHOICES.find((c) => c.choice === 'always_allow')?.key).toBeUndefined();
    for (const key of ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'Enter', ' ', 'a', 'y']) {
      for (const mods of [{}, { ctrlKey: true }, { altKey: true }, { metaKey: true }]) {
        expect(choiceForKey({ key, ...mods })).not.toBe('always_allow');
      }
    }
  });

  it('ignores other keys, modified keys and typing in a field', () => {
    expect(choiceForKey({ key: '5' })).toBeNull();
    expect(choiceForKey({ key: 'a' })).toBeNull();
    expect(choiceForKey({ key: '1', ctrlKey: true })).toBeNull();
    expect(choiceForKey({ key: '4', metaKey: true })).toBeNull();
    expect(choiceForKey({ key: '2', altKey: true })).toBeNull();
    expect(choiceForKey({ key: '1', inField: true })).toBeNull();
  });

  it('titles the buttons as the approval page does', () => {
    expect(CHOICES.map((c) => c.title('demo.delete_note'))).toEqual([
      'Approve once',
      'Approve for the rest of this run',
      'Always allow demo.delete_note',
      'Deny',
    ]);
    expect(decidedNote('deny')).toBe('Denied.');
  });
});
