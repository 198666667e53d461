// The four choices on a pending approval (docs/approvals.md) and their keyboard shortcuts: 1, 2
// and 4. "Always allow" has none: it writes a permanent rule to the policy, so it must never be one
// stray keystroke away (key 3 does nothing, so a person used to the old shortcut decides nothing).
import type { Choice } from '../backend/types';

export interface ChoiceInfo {
  choice: Choice;
  /** The key that makes this choice; none for a choice that must be clicked. */
  key?: '1' | '2' | '4';
  title: (address: string) => string;
}

export const CHOICES: readonly ChoiceInfo[] = [
  { choice: 'approve_once', key: '1', title: () => 'Approve once' },
  { choice: 'approve_run', key: '2', title: () => 'Approve for the rest of this run' },
  { choice: 'always_allow', title: (address) => `Always allow ${address}` },
  { choice: 'deny', key: '4', title: () => 'Deny' },
];

/** The choice a key press means, if any. Modified keys and keys typed into a field mean nothing. */
export function choiceForKey(event: {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  inField?: boolean;
}): Choice | null {
  if (event.ctrlKey || event.metaKey || event.altKey || event.inField) return null;
  return CHOICES.find((c) => c.key !== undefined && c.key === event.key)?.choice ?? null;
}

/** What the page says after a decision. */
export function decidedNote(choice: Choice): string {
  switch (choice) {
    case 'approve_once':
      return 'Approved once.';
    case 'approve_run':
      return 'Approved for the rest of this run.';
    case 'always_allow':
      return 'Always allowed.';
    case 'deny':
      return 'Denied.';
  }
}
