// The context of a pending call that the approval card shows beside its arguments: the run's code,
// folded around the line that makes the call, and the reason in plain words. Pure, so it is
// unit-tested; pages/approval-code.ts renders it.
//
// Which line makes the call: the hub does not record the caller's line (the sandbox's host call
// carries no stack), so it is found in the code as written: the lines that name the tool
// (`demo.delete_note(`, `everything.get_sum(` for `everything.get-sum`, `everything["get-sum"](`). Honest about what that is: when the code names
// it on several lines they are all marked, and when on none (a name built at run time) none is.

/** A piece of the folded code: lines shown, or lines folded away (`from`..`to`, 1-based). */
export type CodeSegment =
  | { kind: 'lines'; lines: { number: number; text: string; marked: boolean }[] }
  | { kind: 'folded'; from: number; to: number; lines: { number: number; text: string; marked: boolean }[] };

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const RESERVED = new Set(
  ('any arguments await bigint boolean break case catch class const continue debugger default delete do else enum eval ' +
    'export extends false finally for function if implements import in instanceof interface let never new null number ' +
    'object package private protected public return static string super switch symbol this throw true try typeof ' +
    'undefined unknown var void while with yield').split(' '),
);

/** The member name the sandbox gives a namespace or tool name, as capa-typegen's
 * `js_identifier`: characters outside `[A-Za-z0-9_$]` become `_`, a leading digit gets a `_`, a
 * reserved word a trailing `_` (`get-sum` → `get_sum`). */
export function jsIdentifier(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (!/^[A-Za-z_$]/.test(out)) out = `_${out}`;
  if (RESERVED.has(out)) out = `${out}_`;
  return out;
}

const isIdentifier = (name: string): boolean => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);

/** The 1-based lines of `code` that name the tool `address` (`namespace.tool`) as a call: by its
 * member name (`everything.get_sum`, `ns?.tool`) or its own name in brackets
 * (`everything["get-sum"]`). A member renamed for a clash (`tool_2`) is not known here. */
export function callLines(code: string, address: string): number[] {
  const dot = address.indexOf('.');
  if (dot <= 0 || dot === address.length - 1) return [];
  const namespace = address.slice(0, dot);
  const remote = address.slice(dot + 1);
  const ns = escapeRegExp(jsIdentifier(namespace));
  const members = [...new Set([jsIdentifier(remote), remote].filter(isIdentifier))].map(escapeRegExp);
  const quoted = [...new Set([remote, jsIdentifier(remote)])].map(escapeRegExp).join('|');
  const named = new RegExp(
    `(?<![\\w$.])${ns}\\s*(?:\\??\\.\\s*(?:${members.join('|')})(?![\\w$])|\\??\\.?\\[\\s*(["'\`])(?:${quoted})\\1\\s*\\])`,
  );
  const lines: number[] = [];
  code.split('\n').forEach((line, i) => {
    if (named.test(line)) lines.push(i + 1);
  });
  return lines;
}

/** `code` in segments: every line within `context` lines of a marked one shown, the rest folded;
 * with no marked line, the first `head` lines shown. Code of at most `head` lines is shown whole. */
export function foldCode(code: string, marked: number[], options: { context?: number; head?: number } = {}): CodeSegment[] {
  const context = options.context ?? 2;
  const head = options.head ?? 12;
  const all = code.split('\n').map((text, i) => ({ number: i + 1, text, marked: marked.includes(i + 1) }));
  const keep = (n: number): boolean => {
    if (all.length <= head) return true;
    if (marked.length === 0) return n <= head;
    return marked.some((m) => Math.abs(m - n) <= context);
  };
  const out: CodeSegment[] = [];
  for (const line of all) {
    const kind = keep(line.number) ? 'lines' : 'folded';
    const last = out[out.length - 1];
    if (last && last.kind === kind) {
      last.lines.push(line);
      if (last.kind === 'folded') last.to = line.number;
    } else if (kind === 'lines') {
      out.push({ kind, lines: [line] });
    } else {
      out.push({ kind, from: line.number, to: line.number, lines: [line] });
    }
  }
  return out;
}

/** One sentence about the marked lines. */
export function callLinesNote(address: string, lines: number[]): string {
  if (lines.length === 0) return `The code does not name ${address} on any one line (its name is built as it runs), so no line is marked.`;
  if (lines.length === 1) return `Line ${lines[0]} calls ${address}.`;
  const listed = `${lines.slice(0, -1).join(', ')} and ${lines[lines.length - 1]}`;
  return `Lines ${listed} name ${address}: the call asking is one of them.`;
}

/** A reason in plain words: Markdown code spans (`x`) become quoted text. */
export function plainReason(reason: string): string {
  return reason.replace(/`([^`]*)`/g, '"$1"').replace(/`/g, '');
}
