// Paired clients, on the Clients page: which clients may ask you in their own window (their
// approval forms count as your answer), a switch to turn that off, Unpair, and "Pair a client",
// which shows the new key once with where to put it. Only the person in this window pairs a
// client: the hub's token, which every local process can read, never does (docs/security.md,
// "Who may say yes").
import type { Backend, NewPairing, PairedClient } from '../backend/types';
import { errorText, h, notice } from '../lib/dom';
import { switchControl } from '../lib/switch';

/** "just now", "5 min ago", "2 h ago", "3 d ago", or "never". */
export function lastSeen(atMs: number | null, nowMs: number): string {
  if (atMs === null) return 'never';
  const minutes = Math.max(0, Math.floor((nowMs - atMs) / 60000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 1440) return `${Math.floor(minutes / 60)} h ago`;
  return `${Math.floor(minutes / 1440)} d ago`;
}

/** Where the new key goes, for a client that starts `capa mcp` and for one over HTTP. */
export function keySnippets(key: string): { stdio: string; http: string } {
  return {
    stdio: `"env": { "CAPA_CLIENT_KEY": "${key}" }`,
    http: `Authorization: Bearer ${key}`,
  };
}

function row(backend: Backend, client: PairedClient, refresh: () => Promise<void>): HTMLElement {
  const forms = switchControl({
    label: `Forms of ${client.name}`,
    on: client.forms,
    stateText: client.forms ? 'Its forms answer for you' : 'Asks in the app',
    onToggle: async (on) => {
      await backend.setPairedForms(client.id, on);
      await refresh();
    },
  });
  const unpair = h('button', { type: 'button', 'aria-label': `Unpair ${client.name}` }, 'Unpair');
  unpair.addEventListener('click', async () => {
    unpair.disabled = true;
    try {
      await backend.unpairClient(client.id);
    } finally {
      await refresh();
    }
  });
  return h(
    'tr',
    { 'data-paired': client.id },
    h('td', {}, client.name, h('br'), h('small', { class: 'hint' }, client.id)),
    h('td', {}, forms),
    h('td', {}, lastSeen(client.lastSeenMs, Date.now())),
    h('td', {}, unpair),
  );
}

function shownKey(pairing: NewPairing): HTMLElement {
  const snippets = keySnippets(pairing.key);
  return h(
    'div',
    { class: 'paired-key', role: 'status' },
    notice('ok', `Paired ${pairing.name}. Its key is shown once: put it in that client's configuration only.`),
    h('p', {}, 'A client that starts ', h('code', {}, 'capa mcp'), ' passes it in its environment:'),
    h('pre', { class: 'preview' }, h('code', {}, snippets.stdio)),
    h('p', {}, 'A client over HTTP sends it instead of the hub’s token (it stays the same across restarts):'),
    h('pre', { class: 'preview' }, h('code', {}, snippets.http)),
  );
}

/** The section; `refresh` reloads it. */
export function pairedClientsSection(backend: Backend): { element: HTMLElement; refresh: () => Promise<void> } {
  const body = h('div');
  const message = h('div');
  const name = h('input', { type: 'text', placeholder: 'Claude Code', 'aria-label': 'Name of the client to pair', maxlength: 64 }) as HTMLInputElement;
  const pair = h('button', { type: 'submit', class: 'primary' }, 'Pair a client');
  const form = h('form', { class: 'actions' }, name, pair);

  const refresh = async () => {
    try {
      const clients = await backend.pairedClients();
      body.replaceChildren(
        clients.length === 0
          ? h('p', { class: 'hint' }, 'No client is paired: every client’s approvals wait for you in the app’s popup.')
          : h(
              'table',
              { class: 'paired-clients' },
              h('thead', {}, h('tr', {}, h('th', {}, 'Client'), h('th', {}, 'May ask in its own window'), h('th', {}, 'Last seen'), h('th', {}))),
              h('tbody', {}, clients.map((c) => row(backend, c, refresh))),
            ),
      );
    } catch (error) {
      body.replaceChildren(notice('error', errorText(error)));
    }
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    pair.disabled = true;
    try {
      const pairing = await backend.pairClient(name.value.trim() || 'MCP client');
      name.value = '';
      message.replaceChildren(shownKey(pairing));
    } catch (error) {
      message.replaceChildren(notice('error', errorText(error)));
    } finally {
      pair.disabled = false;
      await refresh();
    }
  });

  const element = h(
    'div',
    { class: 'card', id: 'paired-clients' },
    h('h3', {}, 'Paired clients'),
    h(
      'p',
      {},
      'A paired client may ask you about its calls in its own window, and its answer counts as yours. ',
      'It can never loosen your policy: “Always allow” from its window waits for your confirmation on the Policies page. ',
      'Clients that are not paired only ever get the app’s popup.',
    ),
    body,
    form,
    message,
  );
  return { element, refresh };
}
