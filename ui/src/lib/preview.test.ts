import { describe, expect, it } from 'vitest';
import { DEFAULT_FOLD, expandedText, foldPreview, keepsTail, type Segment } from './preview';

describe('foldPreview', () => {
  it('keeps a small preview as one piece of formatted JSON', () => {
    const value = { title: 'doomed', n: 3, ok: true, none: null, list: [1, 2] };
    expect(foldPreview(value)).toEqual([{ text: JSON.stringify(value, null, 2) }]);
  });

  it('folds a long string and expands back to the exact JSON', () => {
    const long = 'x'.repeat(500);
    const value = { title: 'doomed', body: long };
    const segments = foldPreview(value, { maxString: 40, maxLines: 12 });
    const folds = segments.filter((s) => 'short' in s);
    expect(folds).toHaveLength(1);
    const [fold] = folds as { short: string; full: string }[];
    expect(fold!.full).toBe(JSON.stringify(long));
    expect(fold!.short).toContain('500 characters');
    expect(fold!.short.length).toBeLessThan(80);
    expect(expandedText(segments)).toBe(JSON.stringify(value, null, 2));
  });

  it('folds a big nested array but never the whole preview', () => {
    const value = { items: Array.from({ length: 30 }, (_, i) => ({ i })), tags: ['a'] };
    const segments = foldPreview(value, { maxString: 100, maxLines: 10 });
    expect(segments.find((s) => 'short' in s)).toMatchObject({ short: '[ … 30 items ]' });
    expect(expandedText(segments)).toBe(JSON.stringify(value, null, 2));
    const big = Array.from({ length: 50 }, (_, i) => i);
    expect(foldPreview(big, { maxString: 100, maxLines: 5 }).every((s) => 'text' in s)).toBe(true);
  });

  it('handles scalars and empty containers', () => {
    for (const value of ['[redacted]', 42, null, {}, [], { a: {} }]) {
      expect(expandedText(foldPreview(value))).toBe(JSON.stringify(value, null, 2));
    }
  });

  const foldOf = (segments: Segment[]) => segments.find((s): s is { short: string; full: string } => 'short' in s);

  it('shows a long path with its end in view, the file name included (issue 18)', () => {
    const path = `/home/someone/projects/${'deeply/nested/'.repeat(11)}secrets/keys/id_rsa2`;
    expect(path).toHaveLength(197);
    const segments = foldPreview({ path });
    const fold = foldOf(segments)!;
    expect(fold.short).toContain('197 characters');
    const end = path.slice(-80);
    expect(fold.short).toContain(`${end}"`);
    expect(fold.short.startsWith(`"${path.slice(0, 40)}…`)).toBe(true);
    expect(fold.short).toContain('secrets/keys/id_rsa2');
    expect(fold.full).toBe(JSON.stringify(path));
    expect(expandedText(segments)).toBe(JSON.stringify({ path }, null, 2));
  });

  it('keeps the end of commands, their arguments and anything that looks like a path or URL', () => {
    const command = `git -C /srv/repo ${'--verbose '.repeat(14)}push --force origin main`;
    expect(foldOf(foldPreview({ command }))!.short).toContain('push --force origin main"');
    const args = ['--config', `/etc/${'x'.repeat(150)}/last.conf`];
    expect(foldOf(foldPreview({ args }))!.short).toContain('/last.conf"');
    // Under a key that says nothing, the value's own look decides.
    expect(foldOf(foldPreview({ a: `C:\\Users\\${'d'.repeat(140)}\\end.txt` }))!.short).toContain('end.txt"');
    expect(foldOf(foldPreview({ a: `https://example.com/${'p'.repeat(140)}/tail` }))!.short).toContain('/tail"');
    expect(keepsTail('filePath', 'x')).toBe(true);
    expect(keepsTail('working_dir', 'x')).toBe(true);
    expect(keepsTail('text', 'hello')).toBe(false);
    expect(keepsTail(null, '~/notes.txt')).toBe(true);
  });

  it('keeps the start of other long text, and shows a string of the limit whole', () => {
    const body = `Dear team, ${'blah '.repeat(60)}the end`;
    const fold = foldOf(foldPreview({ body }))!;
    expect(fold.short.startsWith('"Dear team,')).toBe(true);
    expect(fold.short).not.toContain('the end');
    const exact = 'y'.repeat(DEFAULT_FOLD.maxString);
    expect(foldPreview({ path: `/${exact.slice(1)}` }).every((s) => 'text' in s)).toBe(true);
  });

  it('never cuts a character in half', () => {
    const path = `/${'😀'.repeat(200)}`;
    const fold = foldOf(foldPreview({ path }))!;
    expect(fold.short).toContain('201 characters');
    expect(fold.short).not.toMatch(/[\uD800-\uDFFF](?![\uDC00-\uDFFF])/u);
    expect([...fold.short.matchAll(/😀/gu)].length).toBe(119); // "/" and 39 at the start, 80 at the end
  });
});
