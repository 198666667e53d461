// A JSON value as a tree a person reads: objects and arrays are branches that open and close,
// with a count; everything else is a leaf shown as JSON text. Pure (the page renders it in
// pages/result-tree.ts), so it is unit-tested.

export type TreeNode =
  | { kind: 'leaf'; key: string | null; text: string; type: 'string' | 'number' | 'boolean' | 'null' }
  | { kind: 'branch'; key: string | null; summary: string; open: boolean; children: TreeNode[] };

/** Branches with at most this many children start open, down to `OPEN_DEPTH`. */
const OPEN_CHILDREN = 20;
const OPEN_DEPTH = 2;
/** Deeper than this, a branch is shown folded to one word: a result nested thousands deep must
 * not build thousands of nested elements (nor overflow the stack turning it into text). */
export const MAX_DEPTH = 64;
export const TOO_DEEP = '… (nested too deep to show; Copy has it all)';

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The tree of `value` (anything `JSON.parse` returns). */
export function jsonTree(value: unknown, key: string | null = null, depth = 0): TreeNode {
  if (value === null || value === undefined) return { kind: 'leaf', key, text: 'null', type: 'null' };
  if (typeof value === 'string') return { kind: 'leaf', key, text: JSON.stringify(value), type: 'string' };
  if (typeof value === 'number') return { kind: 'leaf', key, text: String(value), type: 'number' };
  if (typeof value === 'boolean') return { kind: 'leaf', key, text: String(value), type: 'boolean' };
  if (typeof value !== 'object') return { kind: 'leaf', key, text: String(value), type: 'string' };
  if (depth >= MAX_DEPTH) {
    return { kind: 'leaf', key, text: `${Array.isArray(value) ? '[' : '{'} ${TOO_DEEP}`, type: 'null' };
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value)
    ? `[ ${count(entries.length, 'item', 'items')} ]`
    : `{ ${count(entries.length, 'key', 'keys')} }`;
  return {
    kind: 'branch',
    key,
    summary,
    open: depth < OPEN_DEPTH && entries.length <= OPEN_CHILDREN,
    children: entries.map(([k, v]) => jsonTree(v, k, depth + 1)),
  };
}
