// The redacted argument preview as formatted JSON, with long values folded: a long string or a big
// object/array shows a short form that a click expands. A string up to `maxString` characters is
// shown whole. A longer path or command (by its key, or by looking like a path) keeps its start
// and its END in view, where the file name or the last arguments are (`/home/me/…/id_rsa`); any
// other long string keeps its start. Pure, so it is unit-tested; the page renders the segments
// (pages/approval-card.ts).

/** Plain text, or a folded value: `short` is shown until expanded to `full`. */
export type Segment = { text: string } | { short: string; full: string };

export interface FoldOptions {
  /** Strings longer than this (in characters) are folded. */
  maxString: number;
  /** Nested objects/arrays whose formatted text has more lines than this are folded. */
  maxLines: number;
}

export const DEFAULT_FOLD: FoldOptions = { maxString: 120, maxLines: 12 };

/** Keys whose values are paths or commands: their end matters most. */
const TAIL_KEY =
  /(path|paths|file|files|filename|dir|dirs|directory|folder|cwd|root|dest|destination|target|src|source|command|commands|cmd|script|args|argv|exec|executable|program|url|uri|href|location)$/i;
/** Values that look like a path or a URL: `/x`, `~/x`, `./x`, `C:\x`, `\\host`, `file:`, `https:`. */
const TAIL_VALUE = /^(?:~|\.{1,2})?[\\/]|^[A-Za-z]:[\\/]|^[a-z][a-z0-9+.-]*:\/\//;

/** Whether the string `value` under `key` is shown with its end in view when folded. */
export function keepsTail(key: string | null, value: string): boolean {
  return (key !== null && TAIL_KEY.test(key)) || TAIL_VALUE.test(value);
}

/** The JSON text of a string without its quotes. */
const inner = (text: string): string => JSON.stringify(text).slice(1, -1);

/** The short form of a long string: its start and end (`tail`), or its start, in characters
 * (code points: a folded emoji is never cut in half). */
function shortString(chars: string[], maxString: number, tail: boolean): string {
  const count = `(${chars.length} characters)`;
  if (!tail) return `"${inner(chars.slice(0, maxString).join(''))}…" ${count}`;
  const end = Math.max(1, Math.round((maxString * 2) / 3));
  const start = Math.max(1, maxString - end);
  return `"${inner(chars.slice(0, start).join(''))}…${inner(chars.slice(chars.length - end).join(''))}" ${count}`;
}

const pretty = (value: unknown, indent: string): string =>
  (JSON.stringify(value, null, 2) ?? 'null').replace(/\n/g, `\n${indent}`);

/** Segments whose concatenated `text`/`full` is exactly `JSON.stringify(value, null, 2)`. */
export function foldPreview(value: unknown, options: FoldOptions = DEFAULT_FOLD): Segment[] {
  const out: Segment[] = [];
  const text = (t: string) => {
    const last = out[out.length - 1];
    if (last && 'text' in last) last.text += t;
    else out.push({ text: t });
  };

  const walk = (v: unknown, indent: string, depth: number, key: string | null): void => {
    if (typeof v === 'string') {
      const full = JSON.stringify(v);
      const chars = Array.from(v);
      if (chars.length > options.maxString) {
        out.push({ short: shortString(chars, options.maxString, keepsTail(key, v)), full });
      } else text(full);
      return;
    }
    if (v === null || typeof v !== 'object') {
      text(JSON.stringify(v) ?? 'null');
      return;
    }
    const full = pretty(v, indent);
    const entries: [string | null, unknown][] = Array.isArray(v)
      ? v.map((item) => [null, item])
      : Object.entries(v as Record<string, unknown>);
    if (entries.length === 0) {
      text(full);
      return;
    }
    if (depth > 0 && full.split('\n').length > options.maxLines) {
      const count = Array.isArray(v) ? `${entries.length} items` : `${entries.length} keys`;
      out.push({ short: Array.isArray(v) ? `[ … ${count} ]` : `{ … ${count} }`, full });
      return;
    }
    const deeper = `${indent}  `;
    text(Array.isArray(v) ? '[\n' : '{\n');
    entries.forEach(([entryKey, item], i) => {
      text(deeper + (entryKey === null ? '' : `${JSON.stringify(entryKey)}: `));
      // An array's items are named by the array's key (`args: ["--force", "/a/b"]`).
      walk(item, deeper, depth + 1, entryKey ?? key);
      text(i < entries.length - 1 ? ',\n' : '\n');
    });
    text(`${indent}${Array.isArray(v) ? ']' : '}'}`);
  };

  walk(value, '', 0, null);
  return out;
}

/** The text with every fold expanded. */
export function expandedText(segments: Segment[]): string {
  return segments.map((s) => ('text' in s ? s.text : s.full)).join('');
}
