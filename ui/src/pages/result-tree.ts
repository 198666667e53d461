// A run's result as a tree (lib/json-tree.ts) with a Copy button for the whole value as JSON.
import { copyText, h } from '../lib/dom';
import { type TreeNode, jsonTree } from '../lib/json-tree';

function nodeElement(node: TreeNode): HTMLElement {
  const key = node.key === null ? null : h('span', { class: 'tree-key' }, `${node.key}: `);
  if (node.kind === 'leaf') {
    return h('div', { class: 'tree-leaf' }, key, h('span', { class: `tree-${node.type}` }, node.text));
  }
  return h(
    'details',
    { class: 'tree-branch', open: node.open },
    h('summary', {}, key, h('span', { class: 'tree-count' }, node.summary)),
    h('div', { class: 'tree-children' }, node.children.map(nodeElement)),
  );
}

export function resultTree(value: unknown, label: string): HTMLElement {
  const copy = h('button', { type: 'button', class: 'secondary copy' }, 'Copy');
  copy.addEventListener('click', () => {
    let text: string;
    try {
      text = JSON.stringify(value, null, 2) ?? 'null';
    } catch {
      copy.textContent = 'Too deep to copy';
      return;
    }
    copyText(text).then(
      () => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy'), 1500);
      },
      () => (copy.textContent = 'Could not copy'),
    );
  });
  return h('div', { class: 'json-tree', 'aria-label': label }, copy, nodeElement(jsonTree(value)));
}
