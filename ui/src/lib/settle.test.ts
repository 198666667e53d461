import { describe, expect, it } from 'vitest';
import type { SourceStatus } from '../backend/types';
import { outcome, settle } from './settle';

const status = (state: string, extra: Partial<SourceStatus> = {}): SourceStatus =>
  ({ id: 'broken', state, tools: 0, target: 'http://127.0.0.1:59999/mcp', last_error: null, ...extra }) as SourceStatus;

describe('settle', () => {
  it('waits while the source starts and returns where it settled', async () => {
    const states = ['starting', 'starting', 'down'];
    let calls = 0;
    const settled = await settle(async () => [status(states[Math.min(calls++, 2)]!, { last_error: 'could not reach it' })], 'broken', 5000, 1);
    expect(settled?.state).toBe('down');
    expect(calls).toBe(3);
  });

  it('gives up after the timeout', async () => {
    const settled = await settle(async () => [status('starting')], 'broken', 20, 5);
    expect(settled?.state).toBe('starting');
  });
});

describe('outcome', () => {
  it('is an error, not a success, for a source that cannot start', () => {
    const o = outcome('Added', 'broken', status('down', { last_error: 'could not reach http://127.0.0.1:59999/mcp: connection refused' }));
    expect(o.kind).toBe('error');
    expect(o.text).toBe('Added broken, but it cannot start: could not reach http://127.0.0.1:59999/mcp: connection refused');
  });

  it('says ready with the tool count', () => {
    expect(outcome('Saved', 'demo', status('ready', { id: 'demo', tools: 1 }))).toEqual({ kind: 'ok', text: 'Saved demo: ready with 1 tool.' });
  });
});
