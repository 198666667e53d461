import { describe, expect, it } from 'vitest';
import { parseLines, parsePairs, splitCommandLine } from './forms';

describe('form fields', () => {
  it('reads arguments one per line', () => {
    expect(parseLines(' /a/index.js \n\nstdio\n')).toEqual(['/a/index.js', 'stdio']);
  });
  it('reads KEY=value and Name: value pairs', () => {
    expect(parsePairs('A=1\nB = x=y\nbad\n', '=')).toEqual({ A: '1', B: 'x=y' });
    expect(parsePairs('Authorization: Bearer t', ':')).toEqual({ Authorization: 'Bearer t' });
  });
  it('splits a displayed command line', () => {
    expect(splitCommandLine(`node "/my dir/index.js" stdio 'x y'`)).toEqual(['node', '/my dir/index.js', 'stdio', 'x y']);
  });
});
