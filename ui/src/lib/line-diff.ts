// Two texts as an edit, line by line (longest common subsequence): what a tool's definition
// was when you approved it against what its source lists now. Definitions are small.

export type DiffLine = { kind: 'same' | 'del' | 'add'; text: string };

export function lineDiff(before: string[], after: string[]): DiffLine[] {
  const n = before.length;
  const m = after.length;
  const common: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      common[i]![j] = before[i] === after[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push({ kind: 'same', text: before[i]! });
      i++;
      j++;
    } else if (i < n && (j === m || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      out.push({ kind: 'del', text: before[i]! });
      i++;
    } else {
      out.push({ kind: 'add', text: after[j]! });
      j++;
    }
  }
  return out;
}
