// Tools: the hub's own search, with how it ranks now (lib/search-status.ts), the skills
// (skills-section.ts), and each tool by source with its on/off switch and policy (allow / ask / deny);
// a tool whose text is flagged (docs/tool-text.md) has its warnings under it, with Block and Accept;
// upstream text is shown with hidden characters escaped (lib/tool-text.ts). A tool off is a deny rule for its
// address; turning it on removes that rule. "Turn off all write tools" turns off every tool its
// server does not declare read-only.
import type { Decision, PolicyView, SourceStatus, TextReview, ToolListing } from '../backend/types';
import { clear, errorText, h, notice } from '../lib/dom';
import { searchStatusView, watchSearchStatus } from '../lib/search-status';
import { stateBadge } from '../lib/source-state';
import { declaredReadOnly, switchControl, toolSwitch } from '../lib/switch';
import { ruleName, visibleText } from '../lib/tool-text';
import type { Page, PageContext } from './page';
import { skillsSection } from './skills-section';
import { toolChangesSection } from './tool-changes';

const DECISIONS: Decision[] = ['allow', 'ask', 'deny'];

export function toolsPage({ backend }: PageContext): Page {
  const message = h('div');
  const list = h('div');
  const query = h('input', { type: 'search', name: 'query', 'aria-label': 'Search tools', placeholder: 'What do you want to do?' });
  const search = h(
    'form',
    { class: 'search', role: 'search' },
    query,
    h('button', { type: 'submit' }, 'Search'),
  );
  const searchStatus = searchStatusView();
  const statusWatch = watchSearchStatus(() => backend.config(), searchStatus.show);
  // The search filters the tables below to the tools it matches (by the hub's own ranking,
  // terms and meaning); an empty search shows every tool again.
  const filterLine = h('p', { class: 'filter-line', role: 'status' });
  let matched: Set<string> | null = null;
  const showFilter = () => {
    clear(filterLine);
    for (const row of list.querySelectorAll<HTMLElement>('tr[data-tool], tr[data-flags-of]')) {
      row.hidden = matched !== null && !matched.has(row.dataset.tool ?? row.dataset.flagsOf ?? '');
    }
    for (const group of list.querySelectorAll<HTMLElement>('section[data-source-group]')) {
      group.hidden = matched !== null && group.querySelector('tr[data-tool]:not([hidden])') === null;
    }
    if (matched === null) return;
    const count = list.querySelectorAll('tr[data-tool]:not([hidden])').length;
    const showAll = h('button', { type: 'button', class: 'link' }, 'Show every tool');
    showAll.addEventListener('click', () => {
      query.value = '';
      matched = null;
      showFilter();
    });
    filterLine.append(
      count ? `${count} tool${count === 1 ? '' : 's'} match “${query.value.trim()}”. ` : `No tool matches “${query.value.trim()}”. `,
      showAll,
    );
  };
  search.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(message);
    try {
      const text = query.value.trim();
      matched = text ? new Set((await backend.searchTools(text)).map((m) => m.address)) : null;
      showFilter();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });

  /** Runs a change, says how it went, refreshes; a failure is shown and rethrown. */
  const apply = async (run: () => Promise<string>) => {
    clear(message);
    try {
      message.append(notice('ok', await run()));
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
      throw error;
    }
  };

  const policySelect = (tool: ToolListing) => {
    const select = h(
      'select',
      { 'aria-label': `Policy for ${tool.address}`, 'data-address': tool.address },
      DECISIONS.map((d) => h('option', { value: d, selected: tool.policy === d }, d)),
    );
    select.addEventListener('change', () => {
      const decision = select.value as Decision;
      apply(async () => {
        await backend.setRule({ pattern: tool.address, decision });
        return `${tool.address} → ${decision}`;
      }).catch(() => {
        select.value = tool.policy;
      });
    });
    return select;
  };

  const toolRow = (tool: ToolListing, policy: PolicyView) => {
    const state = toolSwitch(tool, policy);
    const control = switchControl({
      label: `Tool ${tool.address}`,
      on: state.on,
      ...(state.waiting ? { stateText: 'Off, waits for you' } : {}),
      ...(state.locked !== undefined ? { locked: state.locked } : {}),
      onToggle: (on) =>
        apply(async () => {
          const [answer] = await backend.setToolsEnabled([tool.address], on);
          if (on && answer && !answer.enabled) {
            return answer.held
              ? `${tool.address} stays off until you confirm it on the Policies page.`
              : `${tool.address} stays off: ${answer.reason}.`;
          }
          return `${tool.address} is ${on ? 'on' : 'off'}.`;
        }),
    });
    const review = tool.textReview;
    const flagged = review && !review.accepted ? review : null;
    const row = h(
      'tr',
      { 'data-tool': tool.address, class: [state.on ? null : 'off', flagged ? 'flagged' : null].filter(Boolean).join(' ') || null },
      h(
        'th',
        { scope: 'row' },
        h('code', {}, visibleText(tool.address)),
        tool.policy === 'ask' ? h('span', { class: 'badge ask' }, '[asks]') : null,
        tool.review ? h('span', { class: `badge ${tool.review === 'blocked' ? 'deny' : 'ask'}`, title: 'Its definition waits for your review, above.' }, `[${tool.review}]`) : null,
        declaredReadOnly(tool) ? h('span', { class: 'badge', title: 'Its server says it only reads (readOnlyHint), a hint the hub does not check.' }, 'read-only') : null,
        flagged ? h('span', { class: 'badge flag', title: flagged.flags.map((f) => f.rule).join(', ') }, 'flagged') : null,
        review?.accepted ? h('span', { class: 'badge', title: `You accepted this text: ${review.flags.map((f) => f.rule).join(', ')}. A change to it flags the tool again.` }, 'text accepted') : null,
      ),
      h('td', {}, visibleText((tool.description ?? '').split('\n')[0] ?? '')),
      h('td', {}, control),
      h('td', {}, policySelect(tool)),
    );
    return flagged ? [row, flagRow(tool, flagged, state.on)] : [row];
  };

  /** Under a flagged tool: each rule it breaks, and Block (its switch off) or Accept (this text). */
  const flagRow = (tool: ToolListing, review: TextReview, on: boolean) =>
    h(
      'tr',
      { class: 'flag-row', 'data-flags-of': tool.address },
      h(
        'td',
        { colspan: '4' },
        h(
          'div',
          { class: 'text-flags', role: 'alert', 'aria-label': `Warnings about ${tool.address}` },
          h('strong', {}, 'Check this tool’s text before a model reads it:'),
          h(
            'ul',
            {},
            review.flags.map((f) => h('li', { 'data-rule': f.rule }, h('span', { class: 'rule' }, ruleName(f.rule)), ` (${f.rule}) — ${visibleText(f.message)}`)),
          ),
          h(
            'div',
            { class: 'actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': `Block ${tool.address}`,
                disabled: !on,
                title: 'Turns the tool off: hidden from every client, calls refused.',
                onclick: () =>
                  void apply(async () => {
                    await backend.setToolsEnabled([tool.address], false);
                    return `${tool.address} is blocked (off).`;
                  }).catch(() => undefined),
              },
              on ? 'Block' : 'Blocked',
            ),
            h(
              'button',
              {
                type: 'button',
                'aria-label': `Accept ${tool.address}`,
                title: 'The text is fine: no warning until it changes.',
                onclick: () => void apply(() => backend.acceptToolText(tool.address, review.digest)).catch(() => undefined),
              },
              'Accept',
            ),
          ),
        ),
      ),
    );

  const group = (source: string, tools: ToolListing[], policy: PolicyView, status?: SourceStatus) => {
    const writeTools = tools.filter((t) => !declaredReadOnly(t) && t.policy !== 'deny');
    const header = h(
      'div',
      { class: 'group-head' },
      h('h3', {}, source, status && status.state !== 'ready' ? stateBadge(status) : null),
      tools.length
        ? h(
            'button',
            {
              type: 'button',
              'aria-label': `Turn off all write tools of ${source}`,
              disabled: writeTools.length === 0,
              title: 'Every tool its server does not declare read-only.',
              onclick: () =>
                void apply(async () => {
                  const off = await backend.writeToolsOff(source);
                  return off.length ? `Turned off ${off.length} tool${off.length === 1 ? '' : 's'} of ${source} not declared read-only.` : `${source} has no tools that are not declared read-only.`;
                }).catch(() => undefined),
            },
            'Turn off all write tools',
          )
        : null,
    );
    const body = tools.length
      ? h(
          'table',
          {},
          h('thead', {}, h('tr', {}, ['Tool', 'Description', 'On', 'Policy'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, tools.flatMap((t) => toolRow(t, policy))),
        )
      : h(
          'p',
          { class: 'empty' },
          status?.state === 'off' ? `${source} is off: turn it on on the Sources page to serve its tools.` : `${source} serves no tools now${status ? ` (${status.state})` : ''}.`,
        );
    return h(
      'section',
      { class: 'card tool-group', 'data-source-group': source, 'aria-label': `Tools of ${source}` },
      header,
      h('p', { class: 'hint' }, 'A tool off is hidden from every client and refused when called. "Write tools" are those the server does not declare read-only.'),
      body,
    );
  };

  const element = h(
    'section',
    {},
    h('h2', {}, 'Tools'),
    search,
    searchStatus.element,
    filterLine,
    message,
    h('p', { class: 'hint' }, 'The policy applies to calls without a connection; rules for one connection are on the Policies page.'),
    list,
  );
  const refresh = async () => {
    void statusWatch.refresh();
    try {
      const [tools, policy, sources, skills, changes] = await Promise.all([
        backend.tools(),
        backend.policy(),
        backend.sources(),
        backend.skills(),
        backend.toolChanges(),
      ]);
      clear(list);
      const changesCard = toolChangesSection(changes, {
        accept: (address) =>
          void apply(async () => {
            await backend.acceptToolChange(address);
            return `Accepted: ${address} is judged by its new definition from now on.`;
          }).catch(() => undefined),
        block: (address) =>
          void apply(async () => {
            await backend.blockTool(address);
            return `Blocked: ${address} is hidden and refused until you accept it.`;
          }).catch(() => undefined),
      });
      if (changesCard) list.append(changesCard);
      const skillsCard = skillsSection(skills);
      if (skillsCard) list.append(skillsCard);
      const ids = [...new Set([...sources.map((s) => s.id), ...tools.map((t) => t.source)])];
      list.append(
        ids.length
          ? h(
              'div',
              { class: 'tool-groups' },
              ids.map((id) =>
                group(
                  id,
                  tools.filter((t) => t.source === id),
                  policy,
                  sources.find((s) => s.id === id),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No tools yet: add a source.'),
      );
      showFilter();
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Tools', element, refresh, dispose: () => statusWatch.stop() };
}
