import { describe, expect, it } from 'vitest';
import { callLines, callLinesNote, foldCode, jsIdentifier, plainReason } from './call-code';

const CODE = [
  'const notes = await demo.list_notes({});',
  'for (const n of notes) {',
  '  if (n.title === "doomed") {',
  '    await demo.delete_note({ title: n.title });',
  '  }',
  '}',
  'return notes.length;',
].join('\n');

describe('callLines', () => {
  it('finds the line that calls the tool, and only calls of that tool', () => {
    expect(callLines(CODE, 'demo.delete_note')).toEqual([4]);
    expect(callLines(CODE, 'demo.list_notes')).toEqual([1]);
    expect(callLines(CODE, 'demo.delete')).toEqual([]);
    expect(callLines('await notdemo.delete_note({})', 'demo.delete_note')).toEqual([]);
    expect(callLines('await x.demo.delete_note({})', 'demo.delete_note')).toEqual([]);
  });

  it('knows the bracket and optional forms, and marks every line that names the tool', () => {
    const code = 'await gh["create-issue"]({});\nawait gh?.[\'create-issue\']({});\nawait gh . create_x();';
    expect(callLines(code, 'gh.create-issue')).toEqual([1, 2]);
    expect(callLines(code, 'gh.create_x')).toEqual([3]);
    // Regular expression characters in a name are taken literally.
    expect(callLines('a.b$c()', 'a.b$c')).toEqual([1]);
    expect(callLines('a.bxc()', 'a.b.c')).toEqual([]);
  });

  it('knows the member names the sandbox gives tools whose names are not identifiers', () => {
    expect(jsIdentifier('get-sum')).toBe('get_sum');
    expect(jsIdentifier('2fa')).toBe('_2fa');
    expect(jsIdentifier('delete')).toBe('delete_');
    expect(jsIdentifier('my-server')).toBe('my_server');
    const code = 'const a = await everything.get_sum({ a: 1, b: 2 });\nconst b = await everything["get-sum"]({ a: 3, b: 4 });\nreturn a + b;';
    expect(callLines(code, 'everything.get-sum')).toEqual([1, 2]);
    expect(callLines('await my_server.delete_({})', 'my-server.delete')).toEqual([1]);
  });
});

describe('foldCode', () => {
  it('shows short code whole, with the call marked', () => {
    const segments = foldCode(CODE, [4]);
    expect(segments).toHaveLength(1);
    const [shown] = segments;
    expect(shown!.kind).toBe('lines');
    expect(shown!.lines.filter((l) => l.marked).map((l) => l.number)).toEqual([4]);
  });

  it('folds long code around the marked lines', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n');
    const segments = foldCode(code, [20], { context: 2 });
    expect(segments.map((s) => s.kind)).toEqual(['folded', 'lines', 'folded']);
    expect(segments[0]).toMatchObject({ from: 1, to: 17 });
    expect(segments[1]!.lines.map((l) => l.number)).toEqual([18, 19, 20, 21, 22]);
    expect(segments[2]).toMatchObject({ from: 23, to: 40 });
    // Every line is in exactly one segment, in order.
    expect(segments.flatMap((s) => s.lines.map((l) => l.text)).join('\n')).toBe(code);
  });

  it('shows the first lines when no line is marked', () => {
    const code = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join('\n');
    const segments = foldCode(code, [], { head: 5 });
    expect(segments.map((s) => s.kind)).toEqual(['lines', 'folded']);
    expect(segments[0]!.lines).toHaveLength(5);
  });
});

describe('callLinesNote and plainReason', () => {
  it('says which lines, honestly', () => {
    expect(callLinesNote('demo.delete_note', [4])).toBe('Line 4 calls demo.delete_note.');
    expect(callLinesNote('demo.delete_note', [2, 5, 9])).toBe('Lines 2, 5 and 9 name demo.delete_note: the call asking is one of them.');
    expect(callLinesNote('demo.delete_note', [])).toMatch(/no line is marked/);
  });

  it('turns code spans into quoted words and drops stray backticks', () => {
    expect(plainReason('your policy: `gh.*` (connection `work`) is ask')).toBe('your policy: "gh.*" (connection "work") is ask');
    expect(plainReason('odd ` one')).toBe('odd  one');
    expect(plainReason('the server marks it destructive')).toBe('the server marks it destructive');
  });
});
