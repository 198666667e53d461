import { describe, expect, it } from 'vitest';
import { CHOICES, choiceForKey, decidedNote } from './choices';

describe('choices', () => {
  it('maps keys 1–4 to the four choices in order', () => {
    expect(['1', '2', '3', '4'].map((key) => choiceForKey({ key }))).toEqual(['approve_once', 'approve_run', 'always_allow', 'deny']);
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
