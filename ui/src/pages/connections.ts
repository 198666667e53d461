// Connections: static credentials stored in the OS keychain. The secret is write-only: typed into a
// password field, sent once, cleared, never shown back. An OAuth sign-in (its one field is `oauth`)
// has no secret to type: it is signed in again through the browser, and removing it signs out.
import type { Connection, SecretStore, SourceStatus } from '../backend/types';
import { confirmDialog } from '../lib/confirm-dialog';
import { clear, errorText, field, h, notice } from '../lib/dom';
import { unusedFields } from '../lib/secret-refs';
import { signInFlow } from '../lib/sign-in';

/** The field an OAuth sign-in's token set is stored under (capa-oauth `OAUTH_FIELD`). */
const OAUTH_FIELD = 'oauth';

export function isOAuthConnection(c: Connection): boolean {
  return (c.fields ?? []).includes(OAUTH_FIELD);
}
import type { Page, PageContext } from './page';

export function connectionsPage({ backend, route }: PageContext): Page {
  const message = h('div');
  const list = h('div');
  const source = h('select', { name: 'source', required: true });
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const fieldName = h('input', { name: 'field', autocomplete: 'off', placeholder: 'e.g. GITHUB_TOKEN' });
  const secret = h('input', { name: 'secret', type: 'password', required: true, autocomplete: 'new-password' });
  const isDefault = h('input', { type: 'checkbox', name: 'default', id: 'connection-default' });
  const legend = h('legend', {}, 'Add a connection');
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Connection' },
    h(
      'fieldset',
      {},
      legend,
      field('Source', source),
      field('Name', name, 'For example work or personal.'),
      field('Field', fieldName, 'The NAME in the source\'s ${secret:NAME}; optional when it uses one.'),
      field('Secret', secret, 'Stored in the OS keychain. It is never shown again.'),
      h('p', { class: 'toggle' }, isDefault, h('label', { for: 'connection-default' }, 'Default connection of the source')),
      h('p', {}, h('button', { type: 'submit', class: 'primary' }, 'Save connection')),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(message);
    const input = {
      source: source.value,
      name: name.value.trim(),
      secret: secret.value,
      default: isDefault.checked,
      ...(fieldName.value.trim() ? { field: fieldName.value.trim() } : {}),
    };
    try {
      const saved = await backend.saveConnection(input);
      // Cleared once stored, never before: a failed save keeps what was typed.
      secret.value = '';
      message.append(notice('ok', `Saved ${input.source}/${input.name}.`));
      // No `${secret:NAME}` of the source reads this field: say where it would go.
      if (saved.warning) message.append(notice('info', saved.warning));
      form.reset();
      legend.textContent = 'Add a connection';
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });

  const edit = (c: Connection) => {
    source.value = c.source;
    name.value = c.name;
    fieldName.value = c.fields?.[0] ?? '';
    isDefault.checked = !!c.default;
    secret.value = '';
    secret.placeholder = 'Type the new secret';
    legend.textContent = `Replace the secret of ${c.source}/${c.name}`;
    secret.focus();
  };

  const signIns = signInFlow(backend, { message, refresh: () => refresh() });

  // `#/connections?source=…&field=…` (a source's "Add the secret"): the form for that source's
  // secret, ready to type into, once.
  let prefilled = false;
  const prefill = (sources: SourceStatus[]) => {
    const wanted = route.query.get('source');
    if (prefilled || !wanted || !sources.some((s) => s.id === wanted)) return;
    prefilled = true;
    source.value = wanted;
    fieldName.value = route.query.get('field') ?? '';
    if (!name.value) name.value = 'personal';
    legend.textContent = `Add the secret of ${wanted}`;
    secret.focus();
  };

  const remove = async (c: Connection, oauth: boolean) => {
    const yes = await confirmDialog(
      oauth
        ? {
            title: `Sign out of ${c.source} as ${c.name}?`,
            body: 'Capabilities forgets its tokens; sign in again to use it.',
            confirm: 'Sign out',
            danger: true,
          }
        : {
            title: `Remove ${c.source}/${c.name}?`,
            body: `The secret is deleted from the keychain; ${c.source} cannot use this connection until you add it again.`,
            confirm: 'Remove',
            danger: true,
          },
    );
    if (!yes) return;
    clear(message);
    try {
      await backend.removeConnection(c.source, c.name);
      if (oauth) message.append(notice('ok', `Signed out of ${c.source} as ${c.name}.`));
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  };

  /** The row of a static secret: its fields, Edit (replace the secret) and Remove. */
  const secretRow = (c: Connection, sources: SourceStatus[]) =>
    h(
      'tr',
      { 'data-connection': `${c.source}/${c.name}` },
      h('td', {}, c.source),
      h('th', { scope: 'row' }, c.name),
      h(
        'td',
        {},
        (c.fields ?? []).join(', '),
        unusedFields(c, sources).map((f) => h('div', { class: 'hint warning' }, `${c.source} does not use \${secret:${f}}`)),
      ),
      h('td', {}, c.default ? 'yes' : ''),
      h('td', { class: 'hint' }, 'stored'),
      h(
        'td',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => edit(c), 'aria-label': `Edit ${c.source}/${c.name}` }, 'Edit'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${c.source}/${c.name}`, onclick: () => void remove(c, false) }, 'Remove'),
      ),
    );

  /** The row of an OAuth sign-in: where it stands, Sign in again and Sign out. */
  const oauthRow = (c: Connection, sources: SourceStatus[]) => {
    const owner = sources.find((s) => s.id === c.source);
    const listed = owner?.oauth?.connections.find((o) => o.name === c.name);
    const signedIn = listed?.signedIn ?? true;
    const waiting = owner ? signIns.waiting(owner, c.name) : null;
    return h(
      'tr',
      { 'data-connection': `${c.source}/${c.name}`, class: 'oauth-connection' },
      h('td', {}, c.source),
      h('th', { scope: 'row' }, c.name),
      h('td', {}, 'OAuth sign-in'),
      h('td', {}, c.default ? 'yes' : ''),
      h('td', { class: signedIn ? 'hint' : 'signed-out' }, waiting ?? (signedIn ? 'signed in' : 'signed out — sign in again')),
      h(
        'td',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: signedIn ? null : 'primary',
            'aria-label': `Sign in again to ${c.source} as ${c.name}`,
            onclick: () => void signIns.start(c.source, c.name),
          },
          'Sign in again',
        ),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Sign out of ${c.source} as ${c.name}`, onclick: () => void remove(c, true) }, 'Sign out'),
      ),
    );
  };

  // Where secrets go, said plainly when it is not the OS keychain (issue 41).
  const storeNote = h('div');
  const secretHint = form.querySelector<HTMLElement>(`#${secret.id}-hint`);
  const showStore = (store: SecretStore) => {
    clear(storeNote);
    if (store.store === 'file') {
      storeNote.append(
        notice(
          'info',
          `No OS keychain answers on this computer, so secrets are kept encrypted in ${store.file ?? 'a file in Capabilities’ data folder'}, with their key in a file beside it that only you can read. That keeps them out of plain sight and out of backups that leave the key out, but any program running as you can read both. For better protection, install and unlock a keychain (on Linux, GNOME Keyring or KeePassXC’s Secret Service) and save the secrets again.`,
        ),
      );
      if (secretHint) secretHint.textContent = 'Stored encrypted in Capabilities’ data folder (no OS keychain here). It is never shown again.';
    } else if (store.store === 'none') {
      storeNote.append(notice('error', 'Secrets cannot be stored: no OS keychain answers and this hub has no data folder for its encrypted file.'));
    }
  };

  const element = h('section', {}, h('h2', {}, 'Connections'), storeNote, message, list, form);
  const refresh = async () => {
    void backend.secretStore().then(showStore, () => undefined);
    try {
      const [connections, sources] = await Promise.all([backend.connections(), backend.sources()]);
      const chosen = source.value;
      clear(source);
      source.append(...sources.map((s) => h('option', { value: s.id }, s.id)));
      if (chosen) source.value = chosen;
      prefill(sources);
      clear(list);
      list.append(
        connections.length
          ? h(
              'table',
              {},
              h('thead', {}, h('tr', {}, ['Source', 'Name', 'Fields', 'Default', 'Secret', ''].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                connections.map((c) => (isOAuthConnection(c) ? oauthRow(c, sources) : secretRow(c, sources))),
              ),
            )
          : h('p', { class: 'empty' }, 'No connections yet.'),
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Connections', element, refresh, dispose: () => signIns.dispose() };
}
