import { describe, expect, it } from 'vitest';
import type { SourceStatus } from '../backend/types';
import { secretFormHref, shortTarget, stateLabel } from './source-state';

const source = (over: Partial<SourceStatus>): SourceStatus => ({ id: 'keyed', target: 'node x.js', state: 'ready', tools: 0, ...over });

describe('source states in words', () => {
  it('says what a waiting source needs', () => {
    expect(stateLabel(source({ state: 'needs_connection' }))).toBe('needs a secret');
    expect(stateLabel(source({ state: 'needs_connection', def: { oauth: true } as SourceStatus['def'] }))).toBe('needs sign-in');
    expect(stateLabel(source({ state: 'needs_confirmation' }))).toBe('needs your confirmation');
    expect(stateLabel(source({ state: 'down' }))).toBe('down');
  });

  it('links to the form for the first secret the source reads', () => {
    const def = { env: { API_KEY: '${secret:API_KEY}', MODE: 'fast' } } as unknown as SourceStatus['def'];
    expect(secretFormHref(source({ state: 'needs_connection', def }))).toBe('#/connections?source=keyed&field=API_KEY');
    expect(secretFormHref(source({ id: 'a b', state: 'needs_connection' }))).toBe('#/connections?source=a+b');
  });

  it('shortens a long command to its start and its end', () => {
    const long = '/usr/bin/node /work/main/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio';
    const short = shortTarget(long, 40);
    expect(Array.from(short)).toHaveLength(40);
    expect(short.startsWith('/usr/bin/node /')).toBe(true);
    expect(short.endsWith('dist/index.js stdio')).toBe(true);
    expect(shortTarget('node x.js', 40)).toBe('node x.js');
    expect(Array.from(shortTarget('😀'.repeat(100), 10))).toHaveLength(10);
  });
});
