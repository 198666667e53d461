// First start: the demo source, and how to connect the common clients (copyable config).
import { clear, copyButton, errorText, h, notice } from '../lib/dom';
import { type ClientSnippet, clientSnippets, endpointUrl, httpSnippet } from '../lib/snippets';
import type { Page, PageContext } from './page';

export function welcomePage({ backend }: PageContext): Page {
  const sources = h('div');
  const snippetGrid = h('div', { class: 'grid' });
  const copyLine = (label: string, text: () => string) => h('p', {}, copyButton(label, text));
  const snippetCard = (s: ClientSnippet) => {
    const code = h('pre', { class: 'snippet', 'data-client': s.client }, h('code', {}, s.text));
    return h('div', { class: 'card' }, h('h3', {}, s.client), h('p', { class: 'hint' }, s.where), code, copyLine(`Copy the ${s.client} config`, () => s.text));
  };
  // Over HTTP a client shows a key of its own: the hub's token is new at each start, so a snippet
  // with it broke at the next one. Making the key pairs the client (docs/security.md).
  const httpCard = (url: string) => {
    let snippet = httpSnippet(url, null);
    const code = h('code', {}, snippet.text);
    const name = h('input', { type: 'text', value: 'HTTP client', 'aria-label': 'Client name', maxlength: '80' });
    const make = h('button', { type: 'button', class: 'primary' }, 'Make a key for this client');
    const said = h('div');
    const copy = copyLine('Copy the HTTP config', () => snippet.text);
    copy.hidden = true;
    make.addEventListener('click', async () => {
      make.disabled = true;
      try {
        const pairing = await backend.pairClient(name.value.trim() || 'HTTP client');
        snippet = httpSnippet(url, pairing.key);
        code.textContent = snippet.text;
        copy.hidden = false;
        make.hidden = true;
        name.hidden = true;
        said.replaceChildren(notice('ok', `Paired “${pairing.name}”. The key is shown this once: copy it now. It stays valid when Capabilities restarts; unpair the client on the Clients page to end it.`));
      } catch (error) {
        make.disabled = false;
        said.replaceChildren(notice('error', errorText(error)));
      }
    });
    return h(
      'div',
      { class: 'card' },
      h('h3', {}, snippet.client),
      h('p', { class: 'hint' }, snippet.where),
      h('pre', { class: 'snippet', 'data-client': snippet.client }, code),
      h('p', { class: 'hint' }, 'Each HTTP client gets a key of its own, kept across restarts. Making one pairs the client: the questions it asks you in its own window count as your answer, and it can never loosen your policy.'),
      h('p', { class: 'row' }, name, make),
      said,
      copy,
    );
  };
  let snippetsShown = false;
  const showSnippets = async () => {
    if (snippetsShown) return;
    try {
      const view = await backend.clients();
      clear(snippetGrid);
      if (!view.capaCommand) {
        snippetGrid.append(notice('error', 'No capa program was found beside the hub or in /usr/bin: these snippets use `capa` from your PATH.'));
      }
      snippetGrid.append(
        ...clientSnippets({ capaCommand: view.capaCommand ?? 'capa' }).map(snippetCard),
        httpCard(view.mcpUrl || endpointUrl(location.origin)),
      );
      snippetsShown = true;
    } catch (error) {
      clear(snippetGrid);
      snippetGrid.append(notice('error', errorText(error)));
    }
  };
  const element = h(
    'section',
    {},
    h('h2', {}, 'Welcome to Capabilities'),
    h(
      'p',
      {},
      'Capabilities is one MCP server for all your tools. Your AI clients connect to it; it connects to your sources, ',
      'asks you before risky calls, and keeps a history of what ran.',
    ),
    h('h3', {}, 'Your sources'),
    sources,
    h('h3', {}, 'Connect a client'),
    h(
      'p',
      {},
      h('a', { href: '#/clients' }, 'Connect a client in one click'),
      ' on the Clients page (Claude Code, Claude Desktop, Cursor, VS Code, Codex), or paste one of these:',
    ),
    snippetGrid,
  );
  const refresh = async () => {
    void showSnippets();
    try {
      const list = await backend.sources();
      clear(sources);
      sources.append(
        list.length
          ? h(
              'ul',
              {},
              list.map((s) =>
                h('li', {}, h('strong', {}, s.id), ` — ${s.description ?? s.target} (${s.state}, ${s.tools} tools)`),
              ),
            )
          : h('p', {}, 'No sources yet.'),
        h('p', {}, h('a', { href: '#/sources' }, 'Add or change sources')),
      );
      if (list.some((s) => s.id === 'demo')) {
        sources.prepend(h('p', {}, 'The demo source is there so you can try things at once: notes you can write, list and delete (deleting asks you first).'));
      }
    } catch (error) {
      clear(sources);
      sources.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Welcome', element, refresh };
}
