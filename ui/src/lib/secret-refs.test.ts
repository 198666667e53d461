import { describe, expect, it } from 'vitest';
import { referencedSecrets, unusedFields, withReference } from './secret-refs';

describe('secret references', () => {
  it('finds the names a definition refers to', () => {
    const names = referencedSecrets({ env: { A: '${secret:TOKEN}', B: 'x ${secret:other-1} ${secret:TOKEN}', C: '${secret:bad name}' } });
    expect([...names].sort()).toEqual(['TOKEN', 'other-1']);
    expect(referencedSecrets({ headers: { Authorization: 'Bearer ${secret:gh}' } })).toEqual(new Set(['gh']));
    expect(referencedSecrets(null).size).toBe(0);
  });

  it('lists stored fields no source uses', () => {
    const sources = [{ id: 'gh', target: '', state: 'ready', tools: 0, def: { url: 'u', headers: { Authorization: 'Bearer ${secret:token}' } } }];
    expect(unusedFields({ source: 'gh', name: 'work', fields: ['token', 'extra'] }, sources)).toEqual(['extra']);
    expect(unusedFields({ source: 'other', name: 'x', fields: ['token'] }, sources)).toEqual([]);
  });

  it('inserts a whole line at a line start, else the reference alone', () => {
    expect(withReference('', 0, 'TOKEN', 'env')).toEqual({ text: 'TOKEN=${secret:TOKEN}', caret: 21 });
    expect(withReference('A=1\n', 4, 'gh', 'headers').text).toBe('A=1\ngh: ${secret:gh}');
    expect(withReference('Authorization: Bearer ', 22, 'gh', 'headers').text).toBe('Authorization: Bearer ${secret:gh}');
    expect(withReference('B=2', 0, 'T', 'env').text).toBe('T=${secret:T}\nB=2');
  });
});
