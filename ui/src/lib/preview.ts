// The redacted argument preview as formatted JSON, with long values folded: a long string or a big
// object/array shows a short form that a click expands. Pure, so it is unit-tested; the page renders
// the segments (pages/approval-card.ts).

/** Plain text, or a folded value: `short` is shown until expanded to `full`. */
export type Segment = { text: string } | { short: string; full: string };

export interface FoldOptions {
  /** Strings longer than this (in characters) are folded. */
  maxString: number;
  /** Nested objects/arrays whose formatted text has more lines than this are folded. */
  maxLines: number;
}

export const DEFAULT_FOLD: FoldOptions = { maxString: 60, maxLines: 12 };

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

  const walk = (v: unknown, indent: string, depth: number): void => {
    if (typeof v === 'string') {
      const full = JSON.stringify(v);
      if (v.length > options.maxString) {
        out.push({ short: `${JSON.stringify(v.slice(0, options.maxString))}… (${v.length} characters)`, full });
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
    const inner = `${indent}  `;
    text(Array.isArray(v) ? '[\n' : '{\n');
    entries.forEach(([key, item], i) => {
      text(inner + (key === null ? '' : `${JSON.stringify(key)}: `));
      walk(item, inner, depth + 1);
      text(i < entries.length - 1 ? ',\n' : '\n');
    });
    text(`${indent}${Array.isArray(v) ? ']' : '}'}`);
  };

  walk(value, '', 0);
  return out;
}

/** The text with every fold expanded. */
export function expandedText(segments: Segment[]): string {
  return segments.map((s) => ('text' in s ? s.text : s.full)).join('');
}
