// First start: the demo source, and how to connect the common clients (copyable config).
import { clear, copyText, errorText, h, notice } from '../lib/dom';
import { type ClientSnippet, clientSnippets, endpointUrl } from '../lib/snippets';
import type { Page, PageContext } from './page';

export function welcomePage({ backend }: PageContext): Page {
  const sources = h('div');
  const snippetGrid = h('div', { class: 'grid' });
  const snippetCard = (s: ClientSnippet) => {
    const code = h('pre', { class: 'snippet', 'data-client': s.client }, h('code', {}, s.text));
    const copied = h('span', { class: 'hint', role: 'status' });
    const copy = h('button', { type: 'button' }, 'Copy');
    copy.addEventListener('click', async () => {
      try {
        await copyText(s.text);
        copied.textContent = ' Copied.';
      } catch (error) {
        copied.textContent = ` ${errorText(error)}`;
      }
    });
    copy.setAttribute('aria-label', `Copy the ${s.client} config`);
    return h('div', { class: 'card' }, h('h3', {}, s.client), h('p', { class: 'hint' }, s.where), code, h('p', {}, copy, copied));
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
      const paths = { capaCommand: view.capaCommand ?? 'capa', tokenFile: view.tokenFile };
      snippetGrid.append(...clientSnippets(view.mcpUrl || endpointUrl(location.origin), paths).map(snippetCard));
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
