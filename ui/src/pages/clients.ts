// Clients: each MCP client's user-wide file (Claude Code, Claude Desktop, Cursor, VS Code, Codex),
// whether it is connected to this hub and how, and Connect / Disconnect with the file's diff shown
// first; Undo puts back the file's previous text. The hub does the work (capa-install).
import type { ClientPreview, ClientStatus, ClientsView, ProfileListing } from '../backend/types';
import { clear, errorText, h, notice } from '../lib/dom';
import type { Page, PageContext } from './page';
import { pairedClientsSection } from './paired-clients';
import { profilesSection } from './profiles-section';

const STATUS_TEXT: Record<ClientStatus['status'], [string, string]> = {
  not_installed: ['not installed', ''],
  not_connected: ['not connected', 'ask'],
  connected: ['connected', 'allow'],
  outdated: ['connected to another capa program', 'ask'],
  project: ['connected to one project', 'ask'],
  other: ['has a “capa” entry capa did not write', 'deny'],
  unreadable: ['cannot read its file', 'deny'],
};

/** The diff as lines, added and removed lines marked for colour. */
export function diffView(diff: string): HTMLElement {
  const lines = diff.split('\n').map((line) => {
    const kind = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : '';
    return h('span', { class: kind ? `diff-${kind}` : 'diff-line' }, line);
  });
  return h('pre', { class: 'preview diff', 'aria-label': 'Change to the file' }, h('code', {}, lines));
}

function entryText(client: ClientStatus): string | null {
  const e = client.entry;
  if (!e) return null;
  if (e.url) return e.url;
  return [e.command ?? '', ...e.args].join(' ');
}

/** The hub's own profile, served at /mcp and by plain `capa mcp`. */
const DEFAULT_PROFILE = 'default';

/** Which profile a Connect writes: the default one or a named one (docs/profiles.md). */
function profileSelect(
  client: ClientStatus,
  profiles: string[],
  value: string,
  onPick: (name: string) => void,
): HTMLElement {
  const options = [DEFAULT_PROFILE, ...profiles].map((name) => h('option', { value: name }, name));
  const select = h('select', { 'aria-label': `Profile for ${client.name}` }, options) as HTMLSelectElement;
  select.value = value;
  select.addEventListener('change', () => onPick(select.value));
  return h('label', { class: 'profile-pick' }, 'Profile ', select);
}

export function clientsPage({ backend }: PageContext): Page {
  const list = h('div', { class: 'clients' });
  const top = h('div');
  /** The open preview per client: kept across refreshes so live updates do not close it. */
  const open = new Map<string, ClientPreview>();
  /** The profile picked per client (absent: the one its entry serves now, else the default). */
  const picked = new Map<string, string>();
  const messages = new Map<string, HTMLElement>();
  let view: ClientsView | null = null;
  let profiles: ProfileListing[] = [];

  const card = (client: ClientStatus): HTMLElement => {
    const [label, tone] = STATUS_TEXT[client.status];
    const badge = h('span', { class: `badge ${tone}`, 'data-status': client.status }, label);
    const over = client.mode ? ` over ${client.mode === 'http' ? 'HTTP' : 'stdio'}` : '';
    const served =
      client.entry && client.status === 'connected'
        ? `, profile ${client.profile ?? 'default'}`
        : client.profile
          ? `, profile ${client.profile}, which this hub does not declare`
          : '';
    const mode = over || served ? h('span', { class: 'hint' }, `${over}${served}`) : null;
    const pairing =
      client.status === 'connected' && client.paired !== undefined
        ? h(
            'span',
            { class: `badge ${client.paired ? 'allow' : 'ask'}`, 'data-paired': String(client.paired) },
            client.paired ? 'paired: may ask in its own window' : 'not paired: asks in the app',
          )
        : null;
    const current = client.profile ?? DEFAULT_PROFILE;
    // An entry for a profile the hub does not declare is updated to the default unless another is picked.
    const declared = current === DEFAULT_PROFILE || (view?.profiles ?? []).includes(current);
    const profile = picked.get(client.id) ?? (declared ? current : DEFAULT_PROFILE);
    const body = h('div');
    const buttons = h('p', { class: 'actions' });
    const message = messages.get(client.id) ?? null;

    const showPreview = async (action: 'connect' | 'disconnect') => {
      messages.delete(client.id);
      try {
        const named = action === 'connect' && profile !== DEFAULT_PROFILE ? profile : undefined;
        open.set(client.id, await backend.previewClient(client.id, action, named));
      } catch (error) {
        messages.set(client.id, notice('error', errorText(error)));
      }
      render();
    };
    const preview = open.get(client.id);
    if (preview) {
      const apply = h('button', { type: 'button', class: 'primary' }, preview.changes ? 'Apply' : 'Close');
      const cancel = h('button', { type: 'button' }, 'Cancel');
      apply.addEventListener('click', async () => {
        apply.disabled = true;
        open.delete(client.id);
        if (!preview.changes) return render();
        try {
          await backend.applyClient(client.id, preview.planId);
          messages.set(client.id, notice('ok', `Wrote ${preview.path}.`));
        } catch (error) {
          messages.set(client.id, notice('error', errorText(error)));
        }
        await refresh();
      });
      cancel.addEventListener('click', () => {
        open.delete(client.id);
        render();
      });
      body.append(
        h(
          'div',
          { class: 'client-preview' },
          preview.warning ? notice('info', `This ${preview.warning}.`) : null,
        preview.pairs
          ? notice('info', `This pairs ${client.name}: its entry gets its own key, so its approval forms count as your answer (never to loosen your policy).`)
          : null,
        preview.changes
          ? h('p', {}, `Capabilities will change ${preview.path}:`)
          : h('p', {}, `${preview.path} already says this; nothing to change.`),
        preview.changes ? diffView(preview.diff) : null,
          h('p', { class: 'actions' }, apply, preview.changes ? cancel : null),
        ),
      );
    } else {
      const connected = client.status === 'connected' && client.mode === 'stdio';
      const profiles = view?.profiles ?? [];
      if ((profiles.length > 0 || client.profile) && client.status !== 'unreadable' && client.status !== 'other' && view?.capaCommand) {
        buttons.append(profileSelect(client, profiles, profile, (name) => {
          picked.set(client.id, name);
          render();
        }));
      }
      const switching = connected && profile !== current;
      if (client.status !== 'unreadable' && (!connected || switching) && view?.capaCommand) {
        const label = switching ? 'Switch profile' : client.status === 'outdated' ? 'Update' : 'Connect';
        const connect = h('button', { type: 'button', class: 'primary' }, label);
        connect.setAttribute('aria-label', `Connect ${client.name}`);
        connect.addEventListener('click', () => void showPreview('connect'));
        buttons.append(connect);
      }
      if (connected && !switching && client.paired === false && view?.capaCommand) {
        const pair = h('button', { type: 'button' }, 'Pair');
        pair.setAttribute('aria-label', `Pair ${client.name}`);
        pair.addEventListener('click', () => void showPreview('connect'));
        buttons.append(pair);
      }
      if (client.entry && client.status !== 'other' && client.mode !== 'http') {
        const disconnect = h('button', { type: 'button' }, 'Disconnect');
        disconnect.setAttribute('aria-label', `Disconnect ${client.name}`);
        disconnect.addEventListener('click', () => void showPreview('disconnect'));
        buttons.append(disconnect);
      }
      if (client.undo) {
        const undo = h('button', { type: 'button' }, 'Undo');
        undo.setAttribute('aria-label', `Undo the last change to ${client.name}'s file`);
        undo.addEventListener('click', async () => {
          undo.disabled = true;
          try {
            await backend.undoClient(client.id);
            messages.set(client.id, notice('ok', `Put back ${client.path} as it was.`));
          } catch (error) {
            messages.set(client.id, notice('error', errorText(error)));
          }
          await refresh();
        });
        buttons.append(undo);
      }
    }
    const entry = entryText(client);
    return h(
      'div',
      { class: 'card client', 'data-client': client.id },
      h('h3', {}, client.name),
      h('p', {}, badge, mode, pairing ? ' ' : null, pairing),
      h('p', { class: 'hint path' }, client.path),
      entry ? h('p', { class: 'hint' }, 'Its “capa” entry runs: ', h('code', {}, entry)) : null,
      client.error ? notice('error', client.error) : null,
      message,
      body,
      buttons,
    );
  };

  const render = () => {
    clear(list);
    clear(top);
    if (!view) return;
    if (!view.capaCommand) {
      top.append(
        notice('error', 'No capa program was found beside the hub or in /usr/bin, so clients cannot be connected: install the package, or build it with `cargo build -p capa-cli`.'),
      );
    }
    const profileCard = profilesSection(profiles, view.mcpUrl.replace(/\/mcp$/, ''), view.capaCommand);
    if (profileCard) top.append(profileCard);
    list.append(h('div', { class: 'grid' }, view.clients.map(card)));
  };

  const paired = pairedClientsSection(backend);
  const refresh = async () => {
    void paired.refresh();
    try {
      [view, profiles] = await Promise.all([backend.clients(), backend.profiles()]);
      render();
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };

  const element = h(
    'section',
    {},
    h('h2', {}, 'Clients'),
    h(
      'p',
      {},
      'Connect an AI client to this hub: Capabilities adds a “capa” entry to the client’s own settings file for every project, ',
      'showing you the change first. Restart the client (or open a new session) to pick it up.',
    ),
    top,
    list,
    paired.element,
  );
  return { title: 'Clients', element, refresh };
}
