import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, TOO_DEEP, type TreeNode, jsonTree } from './json-tree';

/** The children of a branch (a failed expectation for a leaf). */
function children(node: TreeNode | undefined): TreeNode[] {
  if (node?.kind !== 'branch') throw new Error(`not a branch: ${JSON.stringify(node)}`);
  return node.children;
}

describe('jsonTree', () => {
  it('makes branches with counts and leaves as JSON text', () => {
    const tree = jsonTree({ items: [1, 'two', null], ok: true });
    expect(tree).toMatchObject({ kind: 'branch', summary: '{ 2 keys }', open: true });
    const [items, ok] = children(tree);
    expect(items).toMatchObject({ kind: 'branch', key: 'items', summary: '[ 3 items ]' });
    expect(children(items).map((c) => (c.kind === 'leaf' ? [c.key, c.text, c.type] : null))).toEqual([
      ['0', '1', 'number'],
      ['1', '"two"', 'string'],
      ['2', 'null', 'null'],
    ]);
    expect(ok).toMatchObject({ kind: 'leaf', key: 'ok', text: 'true', type: 'boolean' });
  });

  it('starts big or deep branches closed', () => {
    expect(jsonTree(Array.from({ length: 21 }, (_, i) => i))).toMatchObject({ open: false, summary: '[ 21 items ]' });
    const [a] = children(jsonTree({ a: { b: { c: 1 } } }));
    expect(a).toMatchObject({ kind: 'branch', open: true });
    expect(children(a)[0]).toMatchObject({ kind: 'branch', open: false, summary: '{ 1 key }' });
  });

  it('stops nesting elements at a bounded depth', () => {
    let value: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) value = [value];
    let node = jsonTree(value);
    let depth = 0;
    while (node.kind === 'branch') {
      node = children(node)[0] as TreeNode;
      depth++;
    }
    expect(depth).toBe(MAX_DEPTH);
    expect(node.text).toBe(`[ ${TOO_DEEP}`);
  });
});
