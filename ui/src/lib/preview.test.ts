import { describe, expect, it } from 'vitest';
import { expandedText, foldPreview } from './preview';

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
});
