import { describe, expect, it } from 'vitest';

import { collectArguments, initialValue, parseRawArguments, planForm, type FormField } from './schema-form';

describe('planForm', () => {
  it('makes fields of the simple kinds, with required marks and descriptions', () => {
    const plan = planForm({
      type: 'object',
      properties: {
        a: { type: 'number', description: 'First number' },
        n: { type: 'integer', default: 3 },
        s: { type: ['string', 'null'] },
        b: { type: 'boolean' },
        e: { type: 'string', enum: ['x', 'y'] },
        l: { type: 'array', items: { type: 'string' } },
      },
      required: ['a', 'e'],
    });
    expect('fields' in plan).toBe(true);
    if (!('fields' in plan)) return;
    expect(plan.fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['a', 'number', true],
      ['n', 'integer', false],
      ['s', 'string', false],
      ['b', 'boolean', false],
      ['e', 'enum', true],
      ['l', 'strings', false],
    ]);
    expect(plan.fields[0]!.description).toBe('First number');
    expect(initialValue(plan.fields[1]!)).toBe('3');
  });

  it('sends a schema with anything else to raw JSON, naming the fields', () => {
    const plan = planForm({ type: 'object', properties: { ok: { type: 'string' }, nested: { type: 'object' } } });
    expect(plan).toEqual({ raw: expect.stringContaining('“nested”') });
    expect(planForm(null)).toHaveProperty('raw');
    expect(planForm({ type: 'array' })).toHaveProperty('raw');
  });

  it('accepts a schema without properties as an empty form', () => {
    expect(planForm({ type: 'object' })).toEqual({ fields: [] });
  });
});

describe('collectArguments', () => {
  const fields: FormField[] = [
    { name: 'a', kind: 'number', required: true },
    { name: 'i', kind: 'integer', required: false },
    { name: 'flag', kind: 'boolean', required: true },
    { name: 'maybe', kind: 'boolean', required: false },
    { name: 'pick', kind: 'enum', required: false, options: ['x', 2] },
    { name: 'list', kind: 'strings', required: false },
    { name: 'text', kind: 'string', required: false },
  ];

  it('types the values and leaves empty optional fields out', () => {
    expect(collectArguments(fields, { a: '2.5', i: '', flag: true, maybe: 'false', pick: '2', list: ' one\n\ntwo ', text: '' })).toEqual({
      args: { a: 2.5, flag: true, maybe: false, pick: 2, list: ['one', 'two'] },
    });
  });

  it('names the field that is missing or wrong', () => {
    expect(collectArguments(fields, { a: '' })).toEqual({ error: 'a is required.' });
    expect(collectArguments(fields, { a: 'abc' })).toEqual({ error: 'a must be a number, not “abc”.' });
    expect(collectArguments(fields, { a: '1', i: '1.5' })).toEqual({ error: 'i must be a whole number, not 1.5.' });
  });
});

describe('parseRawArguments', () => {
  it('accepts a JSON object and refuses anything else before sending', () => {
    expect(parseRawArguments('{"a": 2, "b": 3}')).toEqual({ args: { a: 2, b: 3 } });
    expect(parseRawArguments('  ')).toEqual({ args: {} });
    expect(parseRawArguments('{"a": 2,')).toEqual({ error: expect.stringMatching(/^Not valid JSON: .*Nothing was sent\.$/) });
    expect(parseRawArguments('[1, 2]')).toEqual({ error: expect.stringContaining('must be a JSON object') });
    expect(parseRawArguments('null')).toHaveProperty('error');
  });
});
