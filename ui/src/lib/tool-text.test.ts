import { describe, expect, it } from 'vitest';
import { ruleName, visibleText } from './tool-text';

describe('visibleText', () => {
  it('writes terminal escapes, bidi, zero-width and tag characters as \\u{…}', () => {
    expect(visibleText('ok\u001b[2J a\u202eb')).toBe('ok\\u{1b}[2J a\\u{202e}b');
    expect(visibleText('zero\u200bwidth')).toBe('zero\\u{200b}width');
    expect(visibleText('tag\u{e0041}')).toBe('tag\\u{e0041}');
  });
  it('leaves ordinary text, line breaks and emoji alone', () => {
    expect(visibleText('two\nlines\tnaïve — 😀')).toBe('two\nlines\tnaïve — 😀');
  });
});

describe('ruleName', () => {
  it('names known rules and keeps an unknown code', () => {
    expect(ruleName('addresses_the_model')).toBe('addresses the model');
    expect(ruleName('new_rule')).toBe('new_rule');
  });
});
