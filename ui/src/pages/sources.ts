// Sources: status, last error, tool count; add (command + arguments, a URL, or an OpenAPI document),
// edit, remove, restart;
// for a source that signs in with OAuth, its sign-ins and a Sign in button (lib/sign-in.ts).
import type { SourceInput, SourceStatus } from '../backend/types';
import { confirmDialog } from '../lib/confirm-dialog';
import { clear, errorText, field, h, notice } from '../lib/dom';
import { parseLines, parsePairs, splitCommandLine } from '../lib/forms';
import { sourceSwitch } from '../lib/switch';
import { outcome, settle } from '../lib/settle';
import { href } from '../lib/router';
import { secretRefOffers } from '../lib/secret-refs';
import { needsSecret, secretNeeded, shortTarget, stateBadge } from '../lib/source-state';
import { signInFlow, usesOAuth } from '../lib/sign-in';
import type { Page, PageContext } from './page';

export function sourcesPage({ backend }: PageContext): Page {
  const list = h('div');
  const message = h('div');
  let editing: string | null = null;

  const id = h('input', { name: 'id', required: true, pattern: '[a-z0-9_-]+', autocomplete: 'off' });
  const description = h('input', { name: 'description', autocomplete: 'off' });
  const kindCommand = h('input', { type: 'radio', name: 'kind', value: 'command', id: 'kind-command', checked: true });
  const kindUrl = h('input', { type: 'radio', name: 'kind', value: 'url', id: 'kind-url' });
  const kindOpenApi = h('input', { type: 'radio', name: 'kind', value: 'openapi', id: 'kind-openapi' });
  const command = h('input', { name: 'command', autocomplete: 'off' });
  const args = h('textarea', { name: 'args', rows: 3 });
  const env = h('textarea', { name: 'env', rows: 2 });
  const url = h('input', { name: 'url', type: 'url', autocomplete: 'off' });
  const headers = h('textarea', { name: 'headers', rows: 2 });
  const commandFields = h('div', {}, field('Command', command), field('Arguments', args, 'One per line.'), field('Environment', env, 'KEY=value, one per line.'));
  const urlFields = h('div', { hidden: true }, field('URL', url, 'A Streamable HTTP MCP endpoint.'), field('Headers', headers, 'Name: value, one per line.'));
  const spec = h('input', { name: 'spec', autocomplete: 'off' });
  const baseUrl = h('input', { name: 'baseUrl', type: 'url', autocomplete: 'off' });
  const auth = h('textarea', { name: 'auth', rows: 2 });
  const openApiFields = h(
    'div',
    { hidden: true },
    field('Document', spec, 'The OpenAPI 3.0 or 3.1 document: a URL, or a file path (JSON or YAML). Each operation becomes a tool.'),
    field('Base URL', baseUrl, "Where requests go; empty for the document's own server."),
    field('Credentials', auth, 'scheme: value, one per line, by the security scheme names of the document, for example api_key: ${secret:key}.'),
  );
  // `${secret:NAME}` references of existing connections, under Environment / Headers.
  const refs = secretRefOffers(backend, env, headers);
  void refs.update(null);
  const legend = h('legend', {}, 'Add a source');
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Add source');
  const cancel = h('button', { type: 'button', hidden: true }, 'Cancel');
  const syncKind = () => {
    commandFields.hidden = !kindCommand.checked;
    urlFields.hidden = !kindUrl.checked;
    openApiFields.hidden = !kindOpenApi.checked;
  };
  kindCommand.addEventListener('change', syncKind);
  kindUrl.addEventListener('change', syncKind);
  kindOpenApi.addEventListener('change', syncKind);

  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Source' },
    h(
      'fieldset',
      {},
      legend,
      field('Id', id, 'Lower-case letters, digits, - and _; tools are called <id>.<tool>.'),
      field('Description', description),
      h(
        'p',
        { class: 'toggle', role: 'radiogroup', 'aria-label': 'Kind' },
        kindCommand,
        h('label', { for: 'kind-command' }, 'Local command'),
        ' ',
        kindUrl,
        h('label', { for: 'kind-url' }, 'Remote URL'),
        ' ',
        kindOpenApi,
        h('label', { for: 'kind-openapi' }, 'OpenAPI document'),
      ),
      commandFields,
      urlFields,
      openApiFields,
      refs.element,
      h('p', {}, submit, ' ', cancel),
    ),
  );

  const resetForm = () => {
    editing = null;
    form.reset();
    id.disabled = false;
    legend.textContent = 'Add a source';
    submit.textContent = 'Add source';
    cancel.hidden = true;
    syncKind();
    void refs.update(null);
  };
  cancel.addEventListener('click', resetForm);

  const startEdit = (source: SourceStatus) => {
    editing = source.id;
    id.value = source.id;
    id.disabled = true;
    description.value = source.description ?? '';
    const def = source.def ?? {};
    const isOpenApi = def.spec !== undefined;
    const isUrl = !isOpenApi && (def.url !== undefined || (!def.command && /^https?:\/\//.test(source.target)));
    kindOpenApi.checked = isOpenApi;
    kindUrl.checked = isUrl;
    kindCommand.checked = !isUrl && !isOpenApi;
    const pairs = (values: Record<string, string> | undefined, sep: string) =>
      Object.entries(values ?? {}).map(([k, v]) => `${k}${sep}${v}`).join('\n');
    if (isOpenApi) {
      spec.value = def.spec ?? '';
      baseUrl.value = def.baseUrl ?? '';
      auth.value = pairs(def.auth, ': ');
    } else if (isUrl) {
      url.value = def.url ?? source.target;
      headers.value = pairs(def.headers, ': ');
    } else if (def.command) {
      command.value = def.command;
      args.value = (def.args ?? []).join('\n');
      env.value = pairs(def.env, '=');
    } else {
      const [cmd = '', ...rest] = splitCommandLine(source.target);
      command.value = cmd;
      args.value = rest.join('\n');
    }
    legend.textContent = `Edit ${source.id}`;
    submit.textContent = 'Save';
    cancel.hidden = false;
    syncKind();
    void refs.update(source.id);
    id.scrollIntoView({ block: 'nearest' });
    description.focus();
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(message);
    const input: SourceInput = { id: editing ?? id.value.trim() };
    if (description.value.trim()) input.description = description.value.trim();
    if (kindCommand.checked) {
      input.command = command.value.trim();
      input.args = parseLines(args.value);
      const pairs = parsePairs(env.value, '=');
      if (Object.keys(pairs).length) input.env = pairs;
    } else if (kindUrl.checked) {
      input.url = url.value.trim();
      const pairs = parsePairs(headers.value, ':');
      if (Object.keys(pairs).length) input.headers = pairs;
    } else {
      input.spec = spec.value.trim();
      if (baseUrl.value.trim()) input.baseUrl = baseUrl.value.trim();
      const pairs = parsePairs(auth.value, ':');
      if (Object.keys(pairs).length) input.auth = pairs;
    }
    try {
      const verb = editing ? 'Saved' : 'Added';
      if (editing) await backend.updateSource(input);
      else await backend.addSource(input);
      resetForm();
      await refresh();
      // Said once the source started or failed: a source that cannot connect is not a success.
      const pending = notice('info', `${verb} ${input.id}; starting…`);
      message.append(pending);
      const status = await settle(() => backend.sources(), input.id);
      // An OAuth source waits for a sign-in, not for a secret on the Connections page.
      const settled =
        status?.state === 'needs_connection' && usesOAuth(status)
          ? { kind: 'info' as const, text: `${verb} ${input.id}; sign in to it below to start it.` }
          : outcome(verb, input.id, status);
      pending.replaceWith(notice(settled.kind, settled.text));
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });

  const act = async (what: string, run: () => Promise<void>) => {
    clear(message);
    try {
      await run();
      message.append(notice('ok', what));
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  };

  const switched = async (kind: 'ok' | 'error', text: string) => {
    clear(message);
    message.append(notice(kind, text));
    if (kind === 'ok') await refresh();
  };

  // Outcomes go to the page's message area; `refresh` is the page's own (below).
  const signIns = signInFlow(backend, { message, refresh: () => refresh(), panels: true });

  /** A source's row, and for an OAuth source a second row under it with its sign-in. */
  const rows = (s: SourceStatus) => {
    const signIn = signIns.panel(s);
    return signIn
      ? [row(s, true), h('tr', { class: 'sign-in-row', 'data-oauth-for': s.id }, h('td', { colspan: 6 }, signIn))]
      : [row(s, false)];
  };

  const row = (s: SourceStatus, oauth: boolean) =>
    h(
      'tr',
      { 'data-source': s.id, class: oauth ? 'has-sign-in' : null },
      h('th', { scope: 'row' }, h('a', { href: href('sources', s.id), title: `Log and tool tester of ${s.id}` }, s.id), s.description ? h('div', { class: 'hint' }, s.description) : null),
      h('td', {}, sourceSwitch(backend, s, switched), stateBadge(s)),
      h(
        'td',
        { class: 'num' },
        String(s.tools),
        // Tools whose text is flagged (docs/tool-text.md): reviewed, blocked or accepted on the Tools page.
        flaggedTools.get(s.id)
          ? h('a', { class: 'badge flag', href: '#/tools', title: 'Their text hides characters or addresses the model: review them on the Tools page.', 'data-flagged': s.id }, `${flaggedTools.get(s.id)} flagged`)
          : null,
      ),
      h('td', { class: 'target' }, h('code', { title: s.target }, shortTarget(s.target))),
      h(
        'td',
        { class: 'error-text' },
        // An OAuth source that waits for a sign-in says so in its sign-in row, with the button;
        // one that waits for a secret links to the form that stores it.
        oauth && s.state === 'needs_connection' ? '' : needsSecret(s) ? secretNeeded(s) : (s.last_error ?? ''),
        ...(s.limited ?? []).map((cut) => h('div', { class: 'hint' }, `Cut by the hub's limits: ${cut}`)),
      ),
      h(
        'td',
        { class: 'actions' },
        s.editable === false
          ? h('span', { class: 'hint', title: s.file ? `Declared in ${s.file}` : 'Built in' }, s.file ? 'in another file' : 'built in')
          : h('button', { type: 'button', onclick: () => startEdit(s), 'aria-label': `Edit ${s.id}` }, 'Edit'),
        // An off source has nothing to restart: its switch turns it on.
        s.state === 'off'
          ? null
          : s.state === 'needs_confirmation'
          ? h('button', { type: 'button', class: 'primary', onclick: () => void act(`Confirmed ${s.id}.`, () => backend.confirmSource(s.id)), 'aria-label': `Confirm ${s.id}` }, 'Confirm')
          : h('button', { type: 'button', onclick: () => void act(`Restarted ${s.id}.`, () => backend.restartSource(s.id)), 'aria-label': `Restart ${s.id}` }, 'Restart'),
        s.editable !== false && h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `Remove ${s.id}`,
            onclick: async () => {
              const yes = await confirmDialog({
                title: `Remove ${s.id}?`,
                body: `Capabilities stops ${s.id} and takes it out of your capabilities file. Its stored connections are removed too.`,
                confirm: 'Remove',
                danger: true,
              });
              if (yes) void act(`Removed ${s.id}.`, () => backend.removeSource(s.id));
            },
          },
          'Remove',
        ),
      ),
    );

  const importLink = h('p', { class: 'hint' }, 'Or ', h('a', { href: '#/import' }, 'import sources from another client, or add a well-known server'), '.');
  const element = h('section', {}, h('h2', {}, 'Sources'), message, list, importLink, form, signIns.dialogs);
  /** How many tools of each source have flagged, unaccepted text. */
  let flaggedTools = new Map<string, number>();
  const refresh = async () => {
    try {
      const [sources, tools] = await Promise.all([backend.sources(), backend.tools().catch(() => [])]);
      flaggedTools = new Map();
      for (const t of tools) {
        if (t.textReview && !t.textReview.accepted) flaggedTools.set(t.source, (flaggedTools.get(t.source) ?? 0) + 1);
      }
      clear(list);
      list.append(
        sources.length
          ? h(
              'table',
              { class: 'sources-table' },
              // Fixed column widths: the columns no longer move when a refresh brings another
              // error or state (issue 41).
              h('colgroup', {}, ['source', 'status', 'tools', 'target', 'error', 'actions'].map((c) => h('col', { class: `col-${c}` }))),
              h('thead', {}, h('tr', {}, ['Source', 'Status', 'Tools', 'Command or URL', 'Last error', ''].map((t) => h('th', { scope: 'col' }, t)))),
              h('tbody', {}, sources.flatMap(rows)),
            )
          : h('p', { class: 'empty' }, 'No sources yet.'),
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Sources', element, refresh, dispose: () => signIns.dispose() };
}
