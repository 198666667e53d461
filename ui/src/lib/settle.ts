// After a source is added or saved: wait for it to start (or fail) before saying how it went, so
// that "Added broken." is never shown as a success while the source cannot connect.
import type { SourceStatus } from '../backend/types';

/** Longer than a child's usual start (npx may fetch first), within a person's patience; "starting…" shows meanwhile. */
export const SETTLE_MS = 15000;

export type Outcome = { kind: 'ok' | 'error' | 'info'; text: string };

/** States a source stays in until something changes. */
const SETTLED = new Set(['ready', 'down', 'needs_connection', 'needs_confirmation', 'off']);

/** Polls `list` until `id` leaves `starting`, or `timeoutMs` passes. */
export async function settle(
  list: () => Promise<SourceStatus[]>,
  id: string,
  timeoutMs = SETTLE_MS,
  pollMs = 250,
): Promise<SourceStatus | undefined> {
  const until = Date.now() + timeoutMs;
  let last: SourceStatus | undefined;
  for (;;) {
    last = (await list()).find((s) => s.id === id);
    if (!last || SETTLED.has(last.state) || Date.now() >= until) return last;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The sentence after `verb` ("Added", "Saved") `id`, from where the source settled. */
export function outcome(verb: string, id: string, status: SourceStatus | undefined): Outcome {
  if (!status) return { kind: 'ok', text: `${verb} ${id}.` };
  const tools = `${status.tools} tool${status.tools === 1 ? '' : 's'}`;
  switch (status.state) {
    case 'ready':
      return { kind: 'ok', text: `${verb} ${id}: ready with ${tools}.` };
    case 'down':
      return { kind: 'error', text: `${verb} ${id}, but it cannot start: ${status.last_error ?? 'no reason given'}` };
    case 'needs_connection':
      return { kind: 'info', text: `${verb} ${id}; it needs a secret before it can start: add it with “Add the secret” below.` };
    case 'needs_confirmation':
      return { kind: 'info', text: `${verb} ${id}; confirm it below to start it.` };
    case 'off':
      return { kind: 'info', text: `${verb} ${id}; it is turned off.` };
    default:
      return { kind: 'info', text: `${verb} ${id}; it is still starting.` };
  }
}
