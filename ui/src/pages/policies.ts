// Policies: the rules of policy.yaml and, below them, the hub's built-in defaults (what decides a
// tool no rule matches); add a rule, remove one (back to the default); confirm changes made
// outside this window that loosen the policy (they wait for a person).
import type { Decision, HeldChange, PolicyRule } from '../backend/types';
import { clear, errorText, field, h, notice } from '../lib/dom';
import type { Page, PageContext } from './page';

/** What the hub decides for a tool no rule of yours matches (the engine's defaults, in the order
 * it applies them). Your rules win over both. */
export const BUILT_IN_RULES: { applies: string; decision: Decision; why: string }[] = [
  {
    applies: 'Tools their server marks destructive (destructiveHint, and not readOnlyHint)',
    decision: 'ask',
    why: 'The mark is a hint from the server: it can make a tool ask, never let one run freely.',
  },
  {
    applies: 'Every other tool, annotated or not',
    decision: 'allow',
    why: "Most servers annotate nothing; add a rule for * with ask to be asked for every tool.",
  },
];

/** A deny rule for one tool address: what the Tools page's switch writes. */
export function isToolSwitch(rule: PolicyRule): boolean {
  return rule.decision === 'deny' && !rule.connection && !rule.pattern.includes('*') && rule.pattern.includes('.');
}

export function policiesPage({ backend }: PageContext): Page {
  const message = h('div');
  const file = h('p', { class: 'hint' });
  const list = h('div');
  const held = h('div');
  const pattern = h('input', { name: 'pattern', required: true, placeholder: 'github.delete_*', autocomplete: 'off' });
  const connection = h('input', { name: 'connection', placeholder: 'any', autocomplete: 'off' });
  const decision = h('select', { name: 'decision' }, ['allow', 'ask', 'deny'].map((d) => h('option', { value: d }, d)));
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Rule' },
    h('fieldset', {}, h('legend', {}, 'Set a rule'), field('Pattern', pattern, undefined, true), field('Connection', connection, undefined, true), field('Decision', decision, undefined, true), h('button', { type: 'submit', class: 'primary' }, 'Set')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear(message);
    try {
      const rule = { pattern: pattern.value.trim(), decision: decision.value as Decision, ...(connection.value.trim() ? { connection: connection.value.trim() } : {}) };
      await backend.setRule(rule);
      form.reset();
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });
  const element = h(
    'section',
    {},
    h('h2', {}, 'Policies'),
    h(
      'p',
      {},
      'A rule says whether matching tools run (allow), wait for you (ask) or are hidden (deny). The most specific rule wins: an exact tool, then a pattern, then a whole source, then *. A rule for one connection beats one for any. Where none of your rules matches, the built-in defaults at the end of the table decide.',
    ),
    file,
    message,
    held,
    list,
    form,
  );
  const describe = (c: HeldChange) =>
    `${c.target}${c.connection ? ` (connection ${c.connection})` : ''}: ${c.from ? `${c.from} → ` : 'new rule: '}${c.to}`;
  const showHeld = (changes: HeldChange[]) => {
    clear(held);
    if (!changes.length) return;
    held.append(
      h(
        'div',
        { class: 'card held', role: 'region', 'aria-label': 'Changes waiting for you' },
        h('h3', {}, 'Waiting for your confirmation'),
        h('p', {}, 'The policy file was changed outside this window, and these changes loosen it. They take effect once you confirm them; until then the stricter rules stay in force.'),
        h('ul', {}, changes.map((c) => h('li', {}, h('code', {}, describe(c))))),
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: async () => {
              clear(message);
              try {
                await backend.confirmPolicy();
                message.append(notice('ok', 'Confirmed: the policy file is in force.'));
                await refresh();
              } catch (error) {
                message.append(notice('error', errorText(error)));
              }
            },
          },
          'Confirm these changes',
        ),
      ),
    );
  };
  const refresh = async () => {
    try {
      const view = await backend.policy();
      file.textContent = view.file ? `File: ${view.file}` : '';
      showHeld(view.held);
      clear(list);
      list.append(
        h(
              'table',
              {},
              h('thead', {}, h('tr', {}, ['Applies to', 'Connection', 'Decision', ''].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                view.rules.map((r) =>
                  h(
                    'tr',
                    { 'data-rule': r.pattern },
                    h('th', { scope: 'row' }, h('code', {}, r.pattern), isToolSwitch(r) ? h('div', { class: 'hint' }, 'Tool turned off (its switch on the Tools page)') : null),
                    h('td', {}, r.connection ?? 'any'),
                    h('td', {}, h('span', { class: `badge ${r.decision}` }, r.decision)),
                    h(
                      'td',
                      { class: 'actions' },
                      h(
                        'button',
                        {
                          type: 'button',
                          'aria-label': `Remove rule ${r.pattern}${r.connection ? ` for ${r.connection}` : ''} (back to default)`,
                          onclick: async () => {
                            clear(message);
                            try {
                              await backend.resetRule(r.pattern, r.connection);
                              await refresh();
                            } catch (error) {
                              message.append(notice('error', errorText(error)));
                            }
                          },
                        },
                        'Remove rule (back to default)',
                      ),
                    ),
                  ),
                ),
                BUILT_IN_RULES.map((b) =>
                  h(
                    'tr',
                    { class: 'built-in', 'data-built-in': b.decision },
                    h('th', { scope: 'row' }, b.applies, h('div', { class: 'hint' }, b.why)),
                    h('td', {}, 'any'),
                    h('td', {}, h('span', { class: `badge ${b.decision}` }, b.decision)),
                    h('td', { class: 'actions' }, h('span', { class: 'badge' }, 'built in'), h('div', { class: 'hint' }, 'Add a rule to change it.')),
                  ),
                ),
              ),
            )
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Policies', element, refresh };
}
