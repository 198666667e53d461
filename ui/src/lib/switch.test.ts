import { describe, expect, it } from 'vitest';
import type { PolicyView, ToolListing } from '../backend/types';
import { isToolSwitch } from '../pages/policies';
import { declaredReadOnly, toolSwitch } from './switch';

const tool = (address: string, policy: string, annotations?: Record<string, unknown>): ToolListing => ({
  address,
  source: address.split('.')[0] ?? '',
  remoteName: address.split('.')[1] ?? '',
  inputSchema: {},
  annotations: annotations ?? null,
  policy,
});
const view = (rules: PolicyView['rules'], held: PolicyView['held'] = []): PolicyView => ({ file: '/p.yaml', rules, held });

describe('tool switches', () => {
  it('are on unless the policy denies the tool', () => {
    expect(toolSwitch(tool('gh.a', 'allow'), view([]))).toEqual({ on: true, waiting: false });
    expect(toolSwitch(tool('gh.a', 'ask'), view([]))).toEqual({ on: true, waiting: false });
    expect(toolSwitch(tool('gh.a', 'deny'), view([{ pattern: 'gh.a', decision: 'deny' }]))).toEqual({ on: false, waiting: false });
  });
  it('are locked when a wider rule denies the tool, and name it', () => {
    const state = toolSwitch(tool('gh.a', 'deny'), view([{ pattern: 'gh.*', decision: 'deny' }]));
    expect(state.on).toBe(false);
    expect(state.locked).toContain('gh.*');
  });
  it('say when turning on waits for a person', () => {
    const held = view([], [{ target: 'gh.a', from: 'deny', to: 'allow' }]);
    expect(toolSwitch(tool('gh.a', 'deny'), held)).toEqual({ on: false, waiting: true });
  });
  it('count only an explicit readOnlyHint: true as read-only', () => {
    expect(declaredReadOnly(tool('gh.a', 'allow', { readOnlyHint: true }))).toBe(true);
    expect(declaredReadOnly(tool('gh.a', 'allow', { readOnlyHint: 'true' }))).toBe(false);
    expect(declaredReadOnly(tool('gh.a', 'allow'))).toBe(false);
  });
  it('are the exact deny rules on the Policies page', () => {
    expect(isToolSwitch({ pattern: 'gh.a', decision: 'deny' })).toBe(true);
    expect(isToolSwitch({ pattern: 'gh.*', decision: 'deny' })).toBe(false);
    expect(isToolSwitch({ pattern: 'gh', decision: 'deny' })).toBe(false);
    expect(isToolSwitch({ pattern: 'gh.a', decision: 'deny', connection: 'work' })).toBe(false);
    expect(isToolSwitch({ pattern: 'gh.a', decision: 'ask' })).toBe(false);
  });
});
