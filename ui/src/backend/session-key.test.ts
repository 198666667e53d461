import { describe, expect, it } from 'vitest';
import { forgetSessionKey, takeSessionKey, type KeyStore } from './session-key';

function memory(): KeyStore & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

describe('the session key', () => {
  it('moves from the landing URL into storage and out of the address bar, keeping the route', () => {
    const store = memory();
    const replaced: string[] = [];
    const key = takeSessionKey(
      { pathname: '/app/', search: '?session=abc&x=1', hash: '#/approve/r1' },
      store,
      (url) => replaced.push(url),
    );
    expect(key).toBe('abc');
    expect(replaced).toEqual(['/app/?x=1#/approve/r1']);
    expect([...store.items.values()]).toEqual(['abc']);
    // A later page of the same origin finds it, without touching the URL.
    expect(takeSessionKey({ pathname: '/app/', search: '', hash: '#/runs' }, store, () => replaced.push('again'))).toBe('abc');
    expect(replaced).toHaveLength(1);
    forgetSessionKey(store);
    expect(takeSessionKey({ pathname: '/app/', search: '', hash: '' }, store, () => {})).toBeNull();
  });

  it('works without storage', () => {
    expect(takeSessionKey({ pathname: '/app/', search: '?session=k', hash: '' }, null, () => {})).toBe('k');
    expect(takeSessionKey({ pathname: '/app/', search: '', hash: '' }, null, () => {})).toBeNull();
  });
});
