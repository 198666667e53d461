// Tools: the hub's own search, and the policy of each tool (allow / ask / deny).
import type { Decision, ToolListing } from '../backend/types';
import { clear, errorText, h, notice } from '../lib/dom';
import type { Page, PageContext } from './page';

const DECISIONS: Decision[] = ['allow', 'ask', 'deny'];

export function toolsPage({ backend }: PageContext): Page {
  const message = h('div');
  const list = h('div');
  const query = h('input', { type: 'search', name: 'query', 'aria-label': 'Search tools', placeholder: 'What do you want to do?' });
  const results = h('pre', { class: 'search-results', hidden: true, 'aria-live': 'polite' });
  const search = h(
    'form',
    { class: 'search', role: 'search' },
    query,
    h('button', { type: 'submit' }, 'Search'),
  );
  search.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(message);
    try {
      results.textContent = await backend.search(query.value, { limit: 20 });
      results.hidden = false;
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });

  const policySelect = (tool: ToolListing) => {
    const select = h(
      'select',
      { 'aria-label': `Policy for ${tool.address}`, 'data-address': tool.address },
      DECISIONS.map((d) => h('option', { value: d, selected: tool.policy === d }, d)),
    );
    select.addEventListener('change', async () => {
      clear(message);
      const decision = select.value as Decision;
      try {
        await backend.setRule({ pattern: tool.address, decision });
        message.append(notice('ok', `${tool.address} → ${decision}`));
        await refresh();
      } catch (error) {
        select.value = tool.policy;
        message.append(notice('error', errorText(error)));
      }
    });
    return select;
  };

  const element = h(
    'section',
    {},
    h('h2', {}, 'Tools'),
    search,
    results,
    message,
    h('p', { class: 'hint' }, 'The policy applies to calls without a connection; rules for one connection are on the Policies page.'),
    list,
  );
  const refresh = async () => {
    try {
      const tools = await backend.tools();
      clear(list);
      list.append(
        tools.length
          ? h(
              'table',
              {},
              h('thead', {}, h('tr', {}, ['Tool', 'Description', 'Policy'].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                tools.map((t) =>
                  h(
                    'tr',
                    { 'data-tool': t.address },
                    h('th', { scope: 'row' }, h('code', {}, t.address), t.policy === 'ask' ? h('span', { class: 'badge ask' }, '[asks]') : null),
                    h('td', {}, (t.description ?? '').split('\n')[0] ?? ''),
                    h('td', {}, policySelect(t)),
                  ),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No tools yet: add a source.'),
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Tools', element, refresh };
}
