import { describe, expect, it } from 'vitest';
import type { OAuthStatus, SourceStatus } from '../backend/types';
import {
  SIGN_IN_WAIT_MS,
  connectionNameProblem,
  failureText,
  outcomeNotice,
  pollStep,
  signInView,
  usesOAuth,
  waitForSignIn,
} from './sign-in';

const source = (oauth: OAuthStatus | null, extra: Partial<SourceStatus> = {}): SourceStatus => ({
  id: 'notes',
  target: 'http://127.0.0.1:9/mcp',
  state: 'ready',
  tools: 3,
  oauth,
  ...extra,
});
const personal = (signedIn = true, isDefault = true) => ({ name: 'personal', default: isDefault, signedIn });
const waiting = (connection = 'personal') => ({ connection, state: 'waiting' as const, message: null, url: 'http://127.0.0.1:9/authorize?x=1' });
const failed = (message: string | null, connection = 'personal') => ({ connection, state: 'failed' as const, message, url: null });

describe('a source sign-in as the page shows it', () => {
  it('knows which sources sign in with OAuth', () => {
    expect(usesOAuth(source({ connections: [], signIn: null }))).toBe(true);
    expect(usesOAuth(source(null, { def: { url: 'http://x/mcp', oauth: true } }))).toBe(true);
    expect(usesOAuth(source(null, { def: { url: 'http://x/mcp', oauth: false } }))).toBe(false);
    expect(usesOAuth(source(null))).toBe(false);
  });

  it('asks for a first sign-in with the main button when nobody signed in', () => {
    const view = signInView(source({ connections: [], signIn: null }, { state: 'needs_connection' }));
    expect(view.summary).toBe('Sign in needed');
    expect(view.lines).toEqual([]);
    expect(view.action).toEqual({ label: 'Sign in', primary: true });
  });

  it('says who is signed in, marking the default only when there is a choice', () => {
    const one = signInView(source({ connections: [personal()], signIn: null }));
    expect(one.lines.map((l) => l.text)).toEqual(['Signed in as personal']);
    expect(one.markDefault).toBe(false);
    expect(one.action).toEqual({ label: 'Sign in again', connection: 'personal', primary: false });
    const two = signInView(source({ connections: [personal(), { name: 'work', default: false, signedIn: true }], signIn: null }));
    expect(two.markDefault).toBe(true);
    expect(two.lines.find((l) => l.default)?.name).toBe('personal');
  });

  it('makes signing in again the main action for a signed-out connection, the default first', () => {
    const view = signInView(
      source({ connections: [{ name: 'work', default: false, signedIn: false }, personal(false)], signIn: null }, { state: 'needs_connection' }),
    );
    expect(view.lines.map((l) => l.text)).toEqual(['Signed out as work — sign in again', 'Signed out as personal — sign in again']);
    expect(view.action).toEqual({ label: 'Sign in again', connection: 'personal', primary: true });
  });

  it('shows the wait with the authorization link, and a new sign-in as a secondary action', () => {
    const view = signInView(source({ connections: [], signIn: waiting() }));
    expect(view.waiting).toEqual({ connection: 'personal', url: 'http://127.0.0.1:9/authorize?x=1' });
    expect(view.failed).toBeNull();
    expect(view.action).toEqual({ label: 'Sign in again', connection: 'personal', primary: false });
  });

  it('shows a failure in one sentence and offers to try again', () => {
    const view = signInView(source({ connections: [], signIn: failed('the authorization server answered access_denied.') }));
    expect(view.failed?.text).toBe('Could not sign in to notes as personal: the authorization server answered access_denied.');
    expect(view.action).toEqual({ label: 'Sign in', connection: 'personal', primary: true });
    expect(failureText('notes', 'work', 'timed out\n waiting')).toBe('Could not sign in to notes as work: timed out waiting.');
    expect(failureText('notes', 'work', 'refused: access_denied (The user denied the request.)')).toBe(
      'Could not sign in to notes as work: refused: access_denied (The user denied the request.)',
    );
    expect(failureText('notes', 'work', null)).toMatch(/^Could not sign in to notes as work: .+\.$/);
  });
});

describe('connection names', () => {
  it('follow the hub rule: lower-case letters, digits, - and _', () => {
    for (const ok of ['work', 'team-2', 'a_b', 'x'.repeat(64)]) expect(connectionNameProblem(ok)).toBeNull();
    expect(connectionNameProblem('')).toMatch(/Type a name/);
    expect(connectionNameProblem('Work')).toMatch(/lower-case letters, digits, - and _/);
    expect(connectionNameProblem('my work')).toMatch(/not a connection name/);
    expect(connectionNameProblem('x'.repeat(65))).toMatch(/64/);
  });
});

describe('one reading of the listing while signing in', () => {
  it('waits while the hub waits for this connection', () => {
    expect(pollStep(source({ connections: [], signIn: waiting() }), 'personal')).toBe('waiting');
    // Signing in again as an already signed-in connection: done only when the hub stops waiting.
    expect(pollStep(source({ connections: [personal()], signIn: waiting() }), 'personal')).toBe('waiting');
  });
  it('is done when the connection is signed in and the hub no longer waits', () => {
    const signed = source({ connections: [personal()], signIn: null });
    expect(pollStep(signed, 'personal')).toEqual({ kind: 'signed_in', source: signed });
  });
  it('fails with the hub message', () => {
    expect(pollStep(source({ connections: [], signIn: failed('denied') }), 'personal')).toEqual({ kind: 'failed', message: 'denied' });
  });
  it('settles when the hub stopped waiting but the connection does not read signed in yet', () => {
    expect(pollStep(source({ connections: [personal(false)], signIn: null }), 'personal')).toBe('settling');
    expect(pollStep(source({ connections: [], signIn: null }), 'personal')).toBe('settling');
  });
  it('notices a sign-in replaced by another, and a source that went away', () => {
    expect(pollStep(source({ connections: [], signIn: waiting('work') }), 'personal')).toEqual({ kind: 'ended', other: 'work' });
    expect(pollStep(undefined, 'personal')).toEqual({ kind: 'gone' });
  });
});

/** A fake clock: `sleep` moves it on; `list` answers the next listing of `answers` (the last one repeats). */
function clocked(answers: (SourceStatus[] | Error)[]) {
  let t = 0;
  let calls = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
    list: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    calls: () => calls,
    elapsed: () => t,
  };
}

describe('polling until the sign-in is done', () => {
  it('polls every second until signed in, through a failed listing', async () => {
    const clock = clocked([
      [source({ connections: [], signIn: waiting() }, { state: 'needs_connection' })],
      new Error('hub restarting'),
      [source({ connections: [], signIn: waiting() })],
      [source({ connections: [personal()], signIn: null }, { state: 'starting' })],
    ]);
    const outcome = await waitForSignIn(clock.list, 'notes', 'personal', clock);
    expect(outcome.kind).toBe('signed_in');
    expect(clock.calls()).toBe(4);
    expect(clock.elapsed()).toBe(3000);
  });

  it('answers the hub failure', async () => {
    const clock = clocked([[source({ connections: [], signIn: waiting() })], [source({ connections: [], signIn: failed('access_denied') })]]);
    expect(await waitForSignIn(clock.list, 'notes', 'personal', clock)).toEqual({ kind: 'failed', message: 'access_denied' });
  });

  it('waits a moment for the source to start again before saying the sign-in ended', async () => {
    const between = [source({ connections: [personal(false)], signIn: null })];
    const clock = clocked([between, between, between, [source({ connections: [personal()], signIn: null })]]);
    expect((await waitForSignIn(clock.list, 'notes', 'personal', clock)).kind).toBe('signed_in');
    const stuck = clocked([between]);
    expect(await waitForSignIn(stuck.list, 'notes', 'personal', { ...stuck, settleMs: 5000 })).toEqual({ kind: 'ended' });
    expect(stuck.elapsed()).toBe(5000);
  });

  it('gives up a little after the hub does (5 minutes)', async () => {
    const clock = clocked([[source({ connections: [], signIn: waiting() })]]);
    expect(await waitForSignIn(clock.list, 'notes', 'personal', clock)).toEqual({ kind: 'timeout' });
    expect(clock.elapsed()).toBeGreaterThanOrEqual(SIGN_IN_WAIT_MS);
    expect(clock.elapsed()).toBeLessThanOrEqual(SIGN_IN_WAIT_MS + 10_000);
  });

  it('stops when the page is left', async () => {
    const controller = new AbortController();
    const clock = clocked([[source({ connections: [], signIn: waiting() })]]);
    const sleep = async (ms: number) => {
      await clock.sleep(ms);
      if (clock.elapsed() >= 2000) controller.abort();
    };
    expect(await waitForSignIn(clock.list, 'notes', 'personal', { ...clock, sleep, signal: controller.signal })).toEqual({ kind: 'cancelled' });
    expect(clock.calls()).toBe(2);
  });
});

describe('what the page says at the end', () => {
  it('names the source and the connection', () => {
    expect(outcomeNotice('notes', 'personal', { kind: 'signed_in', source: source(null) })).toEqual({ kind: 'ok', text: 'Signed in to notes as personal.' });
    expect(outcomeNotice('notes', 'personal', { kind: 'failed', message: 'denied' })).toEqual({ kind: 'error', text: 'Could not sign in to notes as personal: denied.' });
    expect(outcomeNotice('notes', 'personal', { kind: 'timeout' })?.text).toMatch(/within 5 minutes; press Sign in/);
    expect(outcomeNotice('notes', 'personal', { kind: 'ended', other: 'work' })?.text).toMatch(/replaced by one as work/);
    expect(outcomeNotice('notes', 'personal', { kind: 'cancelled' })).toBeNull();
  });
});
