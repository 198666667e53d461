// OAuth sign-in from the app (`POST /api/sources/<id>/sign-in`). The hub opens the system browser
// on the authorization server's page and waits for its redirect itself; the page only polls
// `GET /api/sources` until the connection is signed in or the hub says the sign-in failed. What a
// source's sign-in looks like is drawn from the hub's state (`oauth` of the listing), so a reload or
// a live update shows the same thing; the page keeps only what the hub does not say (whether the
// browser opened). The pure parts (labels, one poll's reading, the polling loop) come first and
// are unit-tested; the DOM parts after them.
import type { Backend, OAuthConnection, SignInStarted, SourceStatus } from '../backend/types';
import { clear, copyButton, errorText, field, h, notice } from './dom';
import { settle } from './settle';

/** How often the page asks the hub whether the sign-in is done. */
export const SIGN_IN_POLL_MS = 1000;
/** How long the hub waits for the browser's redirect (capa-core's SIGN_IN_WAIT). */
export const SIGN_IN_WAIT_MS = 5 * 60_000;
/** Polling goes on a little past the hub's own wait, so that its failure message is the one shown. */
const WAIT_GRACE_MS = 5000;
/** Between the hub recording the tokens and starting the source again, the connection can still
 * read as signed out for a moment: wait this long before saying the sign-in ended without one. */
export const SETTLE_GRACE_MS = 10_000;

/** The hub's rule for connection names (capa-domain `is_connection_name`). */
const CONNECTION_NAME = /^[a-z0-9_-]{1,64}$/;

/** Why `name` cannot be a connection name, in one sentence; null when it can. */
export function connectionNameProblem(name: string): string | null {
  if (name === '') return 'Type a name for the connection, for example work.';
  if (name.length > 64) return 'A connection name has at most 64 characters.';
  if (!CONNECTION_NAME.test(name)) {
    return `“${name}” is not a connection name: use lower-case letters, digits, - and _, for example work or team-2.`;
  }
  return null;
}

/** Whether a source signs in with OAuth (it says so, holds a sign-in, or its server asked for one). */
export function usesOAuth(source: SourceStatus): boolean {
  return !!source.oauth || source.def?.oauth === true;
}

/** What the main sign-in button does: its words, the connection it signs in (none: the hub's
 * default, else `personal`), and whether it is the page's main action for the source. */
export interface SignInAction {
  label: 'Sign in' | 'Sign in again';
  connection?: string;
  primary: boolean;
}

export interface ConnectionLine {
  name: string;
  default: boolean;
  signedIn: boolean;
  text: string;
}

/** A source's sign-in as the page shows it. */
export interface SignInView {
  /** One line per connection; empty when nobody signed in yet (`summary` says so). */
  lines: ConnectionLine[];
  summary: string | null;
  /** Marks the default connection only where there is a choice. */
  markDefault: boolean;
  waiting: { connection: string; url: string | null } | null;
  failed: { connection: string; text: string } | null;
  action: SignInAction;
}

export function connectionText(c: OAuthConnection): string {
  return c.signedIn ? `Signed in as ${c.name}` : `Signed out as ${c.name} — sign in again`;
}

/** One sentence: `head: detail.` (the detail's own final stop kept, none doubled). */
function sentence(head: string, detail: string): string {
  const text = detail.trim().replace(/\s+/g, ' ');
  // "(… request.)" is finished too: a stop before closing brackets or quotes counts.
  return `${head}: ${text}${/[.!?…]["'”’)\]]*$/.test(text) ? '' : '.'}`;
}

export function failureText(id: string, connection: string, message: string | null | undefined): string {
  return sentence(`Could not sign in to ${id} as ${connection}`, message || 'the sign-in failed without saying why; press Sign in to try again');
}

export function signInView(source: SourceStatus): SignInView {
  const connections = source.oauth?.connections ?? [];
  const progress = source.oauth?.signIn ?? null;
  const lines = connections.map((c) => ({ name: c.name, default: c.default, signedIn: c.signedIn, text: connectionText(c) }));
  const waiting = progress?.state === 'waiting' ? { connection: progress.connection, url: progress.url ?? null } : null;
  const failed =
    progress?.state === 'failed'
      ? { connection: progress.connection, text: failureText(source.id, progress.connection, progress.message) }
      : null;
  const signedOut = connections.filter((c) => !c.signedIn).sort((a, b) => Number(b.default) - Number(a.default))[0];
  const byDefault = connections.find((c) => c.default) ?? connections[0];
  let action: SignInAction;
  if (waiting) action = { label: 'Sign in again', connection: waiting.connection, primary: false };
  else if (failed) action = { label: 'Sign in', connection: failed.connection, primary: true };
  else if (connections.length === 0) action = { label: 'Sign in', primary: true };
  else if (signedOut) action = { label: 'Sign in again', connection: signedOut.name, primary: true };
  else action = { label: 'Sign in again', connection: byDefault?.name, primary: false };
  return {
    lines,
    summary: connections.length === 0 ? 'Sign in needed' : null,
    markDefault: connections.length > 1,
    waiting,
    failed,
    action,
  };
}

/** How a sign-in the page started ended. */
export type SignInOutcome =
  | { kind: 'signed_in'; source: SourceStatus }
  | { kind: 'failed'; message: string | null }
  /** The hub no longer waits, and the connection is not signed in (another sign-in replaced it,
   * or the hub restarted). */
  | { kind: 'ended'; other?: string }
  | { kind: 'timeout' }
  /** The source is no longer listed. */
  | { kind: 'gone' }
  /** The page stopped waiting (it was left, or the sign-in was started again). */
  | { kind: 'cancelled' };

/** One reading of the listing: done (an outcome), `waiting`, or `settling` (the hub no longer
 * waits, but the connection does not read as signed in yet). */
export function pollStep(source: SourceStatus | undefined, connection: string): SignInOutcome | 'waiting' | 'settling' {
  if (!source) return { kind: 'gone' };
  const progress = source.oauth?.signIn ?? null;
  if (progress && progress.connection === connection) {
    return progress.state === 'failed' ? { kind: 'failed', message: progress.message ?? null } : 'waiting';
  }
  const signedIn = source.oauth?.connections.some((c) => c.name === connection && c.signedIn) ?? false;
  if (signedIn) return { kind: 'signed_in', source };
  if (progress) return { kind: 'ended', other: progress.connection };
  return 'settling';
}

export interface WaitOptions {
  intervalMs?: number;
  timeoutMs?: number;
  settleMs?: number;
  signal?: AbortSignal;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Polls `list` until the sign-in of `connection` to `id` is done (or the wait runs out). A
 * failing listing (the hub restarting) is read again at the next tick. */
export async function waitForSignIn(
  list: () => Promise<SourceStatus[]>,
  id: string,
  connection: string,
  options: WaitOptions = {},
): Promise<SignInOutcome> {
  const intervalMs = options.intervalMs ?? SIGN_IN_POLL_MS;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const until = now() + (options.timeoutMs ?? SIGN_IN_WAIT_MS + WAIT_GRACE_MS);
  const settleMs = options.settleMs ?? SETTLE_GRACE_MS;
  let settlingSince: number | null = null;
  for (;;) {
    if (options.signal?.aborted) return { kind: 'cancelled' };
    let step: ReturnType<typeof pollStep> | null = null;
    try {
      step = pollStep((await list()).find((s) => s.id === id), connection);
    } catch {
      step = null;
    }
    if (options.signal?.aborted) return { kind: 'cancelled' };
    if (step === 'settling') {
      settlingSince ??= now();
      if (now() - settlingSince >= settleMs) return { kind: 'ended' };
    } else if (step !== null && step !== 'waiting') {
      return step;
    } else if (step === 'waiting') {
      settlingSince = null;
    }
    if (now() >= until) return { kind: 'timeout' };
    await sleep(intervalMs);
  }
}

/** What the page says when a sign-in ended; null when there is nothing to say. */
export function outcomeNotice(id: string, connection: string, outcome: SignInOutcome): { kind: 'ok' | 'error'; text: string } | null {
  switch (outcome.kind) {
    case 'signed_in':
      return { kind: 'ok', text: `Signed in to ${id} as ${connection}.` };
    case 'failed':
      return { kind: 'error', text: failureText(id, connection, outcome.message) };
    case 'ended':
      return {
        kind: 'error',
        text: outcome.other
          ? `The sign-in to ${id} as ${connection} was replaced by one as ${outcome.other}; finish that one, or press Sign in again.`
          : `The sign-in to ${id} as ${connection} ended without signing in; press Sign in to start again.`,
      };
    case 'timeout':
      return { kind: 'error', text: `Nobody finished signing in to ${id} within 5 minutes; press Sign in to start again.` };
    case 'gone':
      return { kind: 'error', text: `The source ${id} is no longer listed (removed?), so the sign-in was dropped.` };
    case 'cancelled':
      return null;
  }
}

export const WAITING_TEXT = 'Waiting for you to finish signing in in your browser…';
export const NOT_OPENED_TEXT = 'The browser could not be opened: open the sign-in page yourself.';

// ---------------------------------------------------------------------------------------------
// The DOM side.

export interface SignInFlowOptions {
  /** Where outcomes are said (the page's message area). */
  message: HTMLElement;
  /** Reloads the page's data. */
  refresh: () => Promise<void>;
  /** Failures are drawn in the source's panel (the Sources pages), not only said in `message`. */
  panels?: boolean;
}

export interface SignInFlow {
  /** The source's sign-in panel; null for a source that does not sign in with OAuth. */
  panel(source: SourceStatus): HTMLElement | null;
  /** "Waiting… Open the sign-in page" for `connection` of `source`, or null when not waiting. */
  waiting(source: SourceStatus, connection: string): HTMLElement | null;
  start(id: string, connection?: string): Promise<void>;
  /** The "Sign in as another connection" and "Finish from another device" dialogs: append them
   * to the page once (they outlive the page's refreshes, so what a person types there stays). */
  readonly dialogs: HTMLDialogElement[];
  dispose(): void;
}

export function signInFlow(backend: Backend, options: SignInFlowOptions): SignInFlow {
  /** What `POST …/sign-in` answered, by source, while the page waits for it. */
  const started = new Map<string, SignInStarted>();
  const polls = new Map<string, AbortController>();
  /** Failures this page just saw end, announced once by the panel's next drawing. */
  const announce = new Set<string>();
  const say = (kind: 'ok' | 'error' | 'info', text: string) => {
    clear(options.message);
    options.message.append(notice(kind, text));
  };

  const start = async (id: string, connection?: string) => {
    polls.get(id)?.abort();
    const controller = new AbortController();
    polls.set(id, controller);
    clear(options.message);
    let answer: SignInStarted;
    try {
      answer = await backend.signIn(id, connection);
    } catch (error) {
      polls.delete(id);
      say('error', errorText(error));
      return;
    }
    if (controller.signal.aborted) return;
    started.set(id, answer);
    await options.refresh();
    const outcome = await waitForSignIn(() => backend.sources(), id, answer.connection, { signal: controller.signal });
    if (outcome.kind === 'cancelled') return;
    polls.delete(id);
    started.delete(id);
    const said = outcomeNotice(id, answer.connection, outcome);
    if (outcome.kind === 'failed' && options.panels) announce.add(id);
    else if (said) say(said.kind, said.text);
    await options.refresh();
    if (outcome.kind === 'signed_in') {
      // The hub starts the source again with the new tokens: show it ready (or why not).
      await settle(() => backend.sources(), id);
      if (!controller.signal.aborted) await options.refresh();
    }
  };

  const waiting = (source: SourceStatus, connection: string): HTMLElement | null => {
    const progress = source.oauth?.signIn;
    if (progress?.state !== 'waiting' || progress.connection !== connection) return null;
    const local = started.get(source.id);
    const url = progress.url ?? (local?.connection === connection ? local.url : null);
    return h(
      'span',
      { class: 'sign-in-waiting' },
      h('span', { role: 'status' }, WAITING_TEXT),
      ' ',
      url ? h('a', { href: url, target: '_blank', rel: 'noopener' }, 'Open the sign-in page') : null,
      local && local.connection === connection && !local.opened ? h('span', { class: 'hint warning' }, NOT_OPENED_TEXT) : null,
      url ? signInAddress(url, () => askAddress(source.id)) : null,
    );
  };

  // "Signed in on another device": the address that device's browser ended on, pasted here.
  let pasteSource = '';
  const addressInput = h('textarea', { name: 'address', rows: 3, autocomplete: 'off', spellcheck: 'false' });
  const addressProblem = h('p', { class: 'error-text', role: 'alert' });
  const pasteTitle = h('h3', { id: 'sign-in-paste-title' }, 'Finish the sign-in');
  const pasteButton = h('button', { type: 'submit', class: 'primary' }, 'Finish signing in');
  const pasteDialog = h(
    'dialog',
    { class: 'sign-in-dialog', 'aria-labelledby': 'sign-in-paste-title' },
    h(
      'form',
      { method: 'dialog' },
      pasteTitle,
      h('p', { class: 'hint' }, PASTE_HINT),
      field('Address the browser ended on', addressInput),
      addressProblem,
      h('p', { class: 'dialog-buttons' }, pasteButton, ' ', h('button', { type: 'button', onclick: () => pasteDialog.close() }, 'Cancel')),
    ),
  );
  pasteDialog.querySelector('form')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const address = addressInput.value.trim();
    if (address === '') {
      addressProblem.textContent = 'Paste the whole address from the browser’s address bar.';
      addressInput.focus();
      return;
    }
    addressProblem.textContent = '';
    pasteButton.disabled = true;
    backend.finishSignIn(pasteSource, address).then(
      () => {
        pasteButton.disabled = false;
        pasteDialog.close();
        // The page that started the sign-in polls already; after a reload nothing does.
        if (!polls.has(pasteSource)) void options.refresh();
      },
      (error: unknown) => {
        pasteButton.disabled = false;
        addressInput.setAttribute('aria-invalid', 'true');
        addressProblem.textContent = errorText(error);
        addressInput.focus();
      },
    );
  });
  addressInput.addEventListener('input', () => {
    addressProblem.textContent = '';
    addressInput.removeAttribute('aria-invalid');
  });
  const askAddress = (id: string) => {
    pasteSource = id;
    pasteTitle.textContent = `Finish the sign-in to ${id}`;
    addressInput.value = '';
    addressInput.removeAttribute('aria-invalid');
    addressProblem.textContent = '';
    pasteDialog.showModal();
    addressInput.focus();
  };

  // "Sign in as another connection…": a name, checked like the hub checks it.
  let dialogSource = '';
  const nameInput = h('input', { name: 'connection', autocomplete: 'off', spellcheck: 'false', pattern: '[a-z0-9_-]+', maxlength: 64 });
  const nameProblem = h('p', { class: 'error-text', role: 'alert' });
  const dialogTitle = h('h3', { id: 'sign-in-dialog-title' }, 'Sign in as another connection');
  const dialog = h(
    'dialog',
    { class: 'sign-in-dialog', 'aria-labelledby': 'sign-in-dialog-title' },
    h(
      'form',
      { method: 'dialog' },
      dialogTitle,
      field('Connection name', nameInput, 'Lower-case letters, digits, - and _; for example work.'),
      nameProblem,
      h(
        'p',
        { class: 'dialog-buttons' },
        h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
        ' ',
        h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
      ),
    ),
  );
  dialog.querySelector('form')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    const problem = connectionNameProblem(name);
    nameProblem.textContent = problem ?? '';
    if (problem) {
      nameInput.setAttribute('aria-invalid', 'true');
      nameInput.focus();
      return;
    }
    nameInput.removeAttribute('aria-invalid');
    dialog.close();
    void start(dialogSource, name);
  });
  const askName = (id: string) => {
    dialogSource = id;
    dialogTitle.textContent = `Sign in to ${id} as another connection`;
    nameInput.value = '';
    nameInput.removeAttribute('aria-invalid');
    nameProblem.textContent = '';
    dialog.showModal();
    nameInput.focus();
  };

  const panel = (source: SourceStatus): HTMLElement | null => {
    if (!usesOAuth(source)) return null;
    const view = signInView(source);
    const fresh = announce.delete(source.id);
    const state = h(
      'span',
      { class: 'sign-in-state' },
      view.summary ? h('span', { class: 'signed-out' }, view.summary) : null,
      view.lines.map((line) =>
        h(
          'span',
          { class: line.signedIn ? 'signed-in' : 'signed-out', 'data-connection': line.name },
          line.text,
          view.markDefault && line.default ? h('span', { class: 'badge' }, 'default') : null,
        ),
      ),
    );
    const { action } = view;
    const main = h(
      'button',
      {
        type: 'button',
        class: action.primary ? 'primary' : null,
        'aria-label': `${action.label} to ${source.id}${action.connection ? ` as ${action.connection}` : ''}`,
        onclick: () => void start(source.id, action.connection),
      },
      action.label,
    );
    const other = h('button', { type: 'button', class: 'link', onclick: () => askName(source.id) }, 'Sign in as another connection…');
    return h(
      'div',
      { class: 'sign-in', role: 'group', 'aria-label': `Sign-in to ${source.id}`, 'data-sign-in': source.id },
      h('span', { class: 'sign-in-label' }, 'OAuth'),
      state,
      view.waiting ? waiting(source, view.waiting.connection) : null,
      view.failed && (options.panels ?? false) ? h('span', { class: 'error-text sign-in-failed', role: fresh ? 'alert' : null }, view.failed.text) : null,
      h('span', { class: 'sign-in-actions' }, main, ' ', other),
    );
  };

  return {
    panel,
    waiting,
    start,
    dialogs: [dialog, pasteDialog],
    dispose() {
      for (const controller of polls.values()) controller.abort();
      polls.clear();
      if (dialog.open) dialog.close();
      if (pasteDialog.open) pasteDialog.close();
    },
  };
}

/** The sign-in page's address, shown whole with Copy: when no browser opens (a desktop without
 * one, a link the app could not hand over), a person pastes it into a browser themselves, here or
 * on another device. Another device's browser cannot reach this computer's loopback address at
 * the end, so the address it ends on comes back through `askAddress` (docs/connections.md). No
 * QR code: the address is long and the way back is a paste anyway. */
function signInAddress(url: string, askAddress: () => void): HTMLElement {
  return h(
    'div',
    { class: 'sign-in-address' },
    h('span', { class: 'hint' }, 'No browser came up? Open this address in a browser, on this computer or another device:'),
    h('code', { class: 'wrap' }, url),
    copyButton('Copy the sign-in address', () => url, 'Copied: paste it into a browser.'),
    h('button', { type: 'button', class: 'link', onclick: askAddress }, 'Signed in on another device? Paste the address it ended on…'),
  );
}

export const PASTE_HINT =
  'After you sign in on another device, its browser tries to go back to this computer and fails: it shows an error at an address that starts with http://127.0.0.1 and holds code= and state=. Copy that whole address from the address bar and paste it here.';
