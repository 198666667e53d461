import { describe, expect, it } from 'vitest';
import { ARM_DELAY_MS, InputGuard } from './arming';

/** A clock the test moves by hand. */
function clock(start = 1000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('InputGuard', () => {
  it('ignores input for the delay after it is made, then takes it', () => {
    const c = clock();
    const guard = new InputGuard(ARM_DELAY_MS, c.now);
    expect(guard.ready()).toBe(false);
    expect(guard.remainingMs()).toBe(ARM_DELAY_MS);
    c.advance(ARM_DELAY_MS - 1);
    expect(guard.ready()).toBe(false);
    c.advance(1);
    expect(guard.ready()).toBe(true);
    expect(guard.remainingMs()).toBe(0);
  });

  it('ignores input again for the whole delay after a re-arm (shown again, focused, another call)', () => {
    const c = clock();
    const guard = new InputGuard(ARM_DELAY_MS, c.now);
    c.advance(5000);
    expect(guard.ready()).toBe(true);
    guard.rearm();
    expect(guard.ready()).toBe(false);
    c.advance(ARM_DELAY_MS - 1);
    expect(guard.ready()).toBe(false);
    c.advance(1);
    expect(guard.ready()).toBe(true);
  });

  it('a re-arm never shortens the moment already running', () => {
    const c = clock();
    const guard = new InputGuard(ARM_DELAY_MS, c.now);
    c.advance(100);
    guard.rearm();
    expect(guard.remainingMs()).toBe(ARM_DELAY_MS);
    const shorter = new InputGuard(10, c.now);
    expect(shorter.remainingMs()).toBe(10);
  });

  it('waits between half a second and a second, as browsers do for their prompts', () => {
    expect(ARM_DELAY_MS).toBeGreaterThanOrEqual(500);
    expect(ARM_DELAY_MS).toBeLessThanOrEqual(1000);
  });
});
