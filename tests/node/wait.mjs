// Waiting in tests: poll until a condition holds, with a deadline that names what was awaited.
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

export async function waitFor(what, fn, { timeoutMs = 20000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    }
    await sleep(intervalMs);
  }
}
