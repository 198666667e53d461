// The four choices on a pending approval (docs/approvals.md) and their keyboard shortcuts 1–4.
import type { Choice } from '../backend/types';

export interface ChoiceInfo {
  choice: Choice;
  key: '1' | '2' | '3' | '4';
  title: (address: string) => string;
}

export const CHOICES: readonly ChoiceInfo[] = [
  { choice: 'approve_once', key: '1', title: () => 'Approve once' },
  { choice: 'approve_run', key: '2', title: () => 'Approve for the rest of this run' },
  { choice: 'always_allow', key: '3', title: (address) => `Always allow ${address}` },
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
  return CHOICES.find((c) => c.key === event.key)?.choice ?? null;
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
