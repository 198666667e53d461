// Import: sources from another client's MCP file (preview first: what is added, conflicts, the
// secrets offered to move into the keychain), and one-click add from a curated list of well-known
// servers. Secret values never reach this page: the hub sends only their names and lengths.
import type { ImportChoice, ImportPreview, ImportServer, ImportVar, WellKnownServer } from '../backend/types';
import { clear, errorText, field, h, notice } from '../lib/dom';
import { outcome, settle } from '../lib/settle';
import type { Page, PageContext } from './page';

/** A row's controls, read when the person imports. */
interface Row {
  server: ImportServer;
  pick: HTMLInputElement;
  id: HTMLInputElement;
  move: HTMLInputElement | null;
}

function varLine(v: ImportVar): HTMLElement {
  if (!v.secret) return h('li', {}, h('code', {}, v.key), ' = ', h('code', { class: 'wrap' }, v.value ?? ''));
  const s = v.secret;
  return h(
    'li',
    { 'data-secret': s.field },
    h('code', {}, v.key),
    ' = ',
    h('span', { class: 'badge ask' }, `secret, hidden (${s.length} characters)`),
    ' → ',
    h('code', {}, `${s.prefix}\${secret:${s.field}}`),
    s.whyNot ? h('div', { class: 'hint' }, s.whyNot) : null,
  );
}

function describe(server: ImportServer): HTMLElement {
  const vars = server.kind === 'stdio' ? (server.env ?? []) : (server.headers ?? []);
  const target =
    server.kind === 'stdio' ? [server.command ?? '', ...(server.args ?? [])].join(' ') : (server.url ?? '');
  return h(
    'div',
    {},
    h('code', { class: 'wrap' }, target),
    server.cwd ? h('div', { class: 'hint' }, `in ${server.cwd}`) : null,
    vars.length
      ? h('ul', { class: 'vars', 'aria-label': server.kind === 'stdio' ? 'Environment' : 'Headers' }, vars.map(varLine))
      : null,
    server.ignored.length ? h('div', { class: 'hint' }, `Ignored: ${server.ignored.join(', ')}`) : null,
    ...server.warnings.map((w) => h('div', { class: 'hint warning' }, w)),
  );
}

export function importPage({ backend }: PageContext): Page {
  const message = h('div');
  const detected = h('div');
  const previewBox = h('div');
  const curated = h('div', { class: 'grid' });
  let choice: ImportChoice | null = null;
  let rows: Row[] = [];

  const path = h('input', { name: 'path', autocomplete: 'off', placeholder: '/home/me/.cursor/mcp.json' });
  const pathForm = h(
    'form',
    { class: 'toggle', 'aria-label': 'Import from a file' },
    field('Or a file', path, 'The whole path of a claude_desktop_config.json, .mcp.json, ~/.claude.json, .cursor/mcp.json or VS Code mcp.json.', true),
    h('button', { type: 'submit' }, 'Preview'),
  );
  pathForm.addEventListener('submit', (event) => {
    event.preventDefault();
    if (path.value.trim()) void preview({ path: path.value.trim() });
  });

  const importSelected = async () => {
    clear(message);
    const picked = rows.filter((r) => r.pick.checked);
    if (!choice || picked.length === 0) {
      message.append(notice('error', 'Pick at least one server to import.'));
      return;
    }
    try {
      const result = await backend.importApply(
        choice,
        picked.map((r) => ({ name: r.server.key, id: r.id.value.trim(), moveSecrets: r.move?.checked ?? false })),
      );
      // Each says how it started ("Added x: ready with 12 tools."), not just that it was written.
      const settled = await Promise.all(result.added.map((a) => settle(() => backend.sources(), a.id)));
      result.added.forEach((added, i) => {
        const said = outcome('Added', added.id, settled[i]);
        const moved = added.movedSecrets.length ? ` Moved into the keychain: ${added.movedSecrets.join(', ')}.` : '';
        message.append(notice(said.kind, `${said.text}${moved}`));
      });
      for (const failed of result.failed) message.append(notice('error', `${failed.name}: ${failed.error}`));
      if (result.added.length) message.append(h('p', {}, h('a', { href: '#/sources' }, 'See them on the Sources page')));
      if (choice) await preview(choice, false);
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  };

  const showPreview = (view: ImportPreview) => {
    clear(previewBox);
    rows = view.servers.map((server) => {
      const secrets = [...(server.env ?? []), ...(server.headers ?? [])].filter((v) => v.secret?.movable);
      return {
        server,
        pick: h('input', { type: 'checkbox', checked: true, 'aria-label': `Import ${server.name}` }),
        id: h('input', { value: server.id, required: true, pattern: '[a-z][a-z0-9_-]*', 'aria-label': `Id for ${server.name}`, autocomplete: 'off' }),
        move: secrets.length
          ? h('input', { type: 'checkbox', checked: true, 'aria-label': `Move the secrets of ${server.name} into the keychain` })
          : null,
      };
    });
    const body = rows.map((r) =>
      h(
        'tr',
        { 'data-server': r.server.key },
        h('td', {}, r.pick),
        h('th', { scope: 'row' }, r.server.name, r.server.project ? h('div', { class: 'hint' }, `project ${r.server.project}`) : null),
        h('td', {}, r.id, r.server.conflict ? h('div', { class: 'hint warning' }, r.server.conflict) : null),
        h('td', {}, describe(r.server)),
        h(
          'td',
          {},
          r.move
            ? h('label', { class: 'toggle' }, r.move, ' Move into the keychain')
            : h('span', { class: 'hint' }, 'no secrets to move'),
        ),
      ),
    );
    previewBox.append(
      h(
        'div',
        {},
        h('p', {}, `${view.servers.length} server(s) in `, h('code', { class: 'wrap' }, view.file), ` (${view.format}).`),
      view.servers.length
        ? h(
            'table',
            { 'aria-label': 'Servers to import' },
            h('thead', {}, h('tr', {}, ['', 'Server', 'Source id', 'Command or URL', 'Secrets'].map((t) => h('th', { scope: 'col' }, t)))),
            h('tbody', {}, body),
          )
        : h('p', { class: 'empty' }, 'Nothing to import.'),
        view.skipped.length
          ? h('ul', { class: 'hint', 'aria-label': 'Skipped' }, view.skipped.map((s) => h('li', {}, `${s.name}: ${s.reason}`)))
          : null,
        view.servers.length
          ? h('p', {}, h('button', { type: 'button', class: 'primary', onclick: () => void importSelected() }, 'Import selected'))
          : null,
      ),
    );
  };

  const preview = async (chosen: ImportChoice, clearMessage = true) => {
    if (clearMessage) clear(message);
    try {
      const view = await backend.importPreview(chosen);
      choice = chosen;
      showPreview(view);
    } catch (error) {
      clear(previewBox);
      (clearMessage ? message : previewBox).append(notice('error', errorText(error)));
    }
  };

  const wellKnownCard = (server: WellKnownServer) => {
    const id = h('input', { value: server.key, required: true, pattern: '[a-z][a-z0-9_-]*', autocomplete: 'off' });
    const params = server.params.map((p) => ({ key: p.key, input: h('input', { required: true, placeholder: p.example, autocomplete: 'off' }), p }));
    const secrets = server.secrets.map((s) => ({ field: s.field, input: h('input', { type: 'password', autocomplete: 'new-password' }), s }));
    const status = h('div');
    const form = h(
      'form',
      { class: 'card', 'aria-label': server.name, 'data-well-known': server.key },
      h('h3', {}, server.name),
      h('p', {}, server.description),
      h('p', {}, h('code', { class: 'wrap' }, server.shown)),
      server.requires ? h('p', { class: 'hint' }, `Needs ${server.requires}.`) : null,
      field('Source id', id),
      params.map(({ input, p }) => field(p.label, input, p.hint)),
      secrets.map(({ input, s }) => field(s.label, input, `${s.hint} Leave empty to set it later on the Connections page.`)),
      h('p', {}, h('button', { type: 'submit', class: 'primary' }, `Add ${server.name}`)),
      status,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clear(status);
      const input = {
        key: server.key,
        id: id.value.trim(),
        values: Object.fromEntries(params.map(({ key, input }) => [key, input.value.trim()])),
        secrets: Object.fromEntries(secrets.map(({ field, input }) => [field, input.value])),
      };
      for (const { input: secret } of secrets) secret.value = '';
      try {
        const added = await backend.addWellKnown(input);
        const said = outcome('Added', added.id, await settle(() => backend.sources(), added.id));
        status.append(notice(said.kind, said.text), h('p', {}, h('a', { href: '#/sources' }, 'See it on the Sources page')));
      } catch (error) {
        status.append(notice('error', errorText(error)));
      }
    });
    return form;
  };

  const element = h(
    'section',
    {},
    h('h2', {}, 'Import'),
    message,
    h('h3', {}, 'Import from a client'),
    h('p', { class: 'hint' }, 'Read another MCP client\'s configuration and add its servers as sources. Nothing is changed in the client\'s file.'),
    detected,
    pathForm,
    previewBox,
    h('h3', {}, 'Add a well-known server'),
    curated,
  );

  let curatedLoaded = false;
  const refresh = async () => {
    try {
      const clients = await backend.importClients();
      clear(detected);
      detected.append(
        h(
          'table',
          { 'aria-label': 'Client files' },
          h('tbody', {},
            clients.map((c) =>
              h(
                'tr',
                { 'data-client': c.client },
                h('th', { scope: 'row' }, c.name),
                h('td', {}, h('code', { class: 'wrap' }, c.path)),
                h('td', {}, c.exists ? h('span', { class: 'badge allow' }, 'found') : h('span', { class: 'hint' }, 'not found')),
                h('td', { class: 'actions' }, h('button', { type: 'button', disabled: !c.exists, onclick: () => void preview({ client: c.client }), 'aria-label': `Preview ${c.name}` }, 'Preview')),
              ),
            ),
          ),
        ),
      );
      if (!curatedLoaded) {
        const servers = await backend.wellKnown();
        clear(curated);
        curated.append(...servers.map(wellKnownCard));
        curatedLoaded = true;
      }
    } catch (error) {
      clear(detected);
      detected.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Import', element, refresh };
}
