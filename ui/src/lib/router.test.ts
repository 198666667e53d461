import { describe, expect, it } from 'vitest';
import { href, parseHash } from './router';

describe('router', () => {
  it('defaults to the welcome page', () => {
    expect(parseHash('').page).toBe('welcome');
    expect(parseHash('#/').page).toBe('welcome');
  });
  it('reads the page, its parameters and the query', () => {
    const route = parseHash('#/runs?status=failed&time=day');
    expect(route.page).toBe('runs');
    expect(route.query.get('status')).toBe('failed');
    expect(parseHash(href('approve', 'run 1')).params).toEqual(['run 1']);
  });
});
