// Policies: the rules of policy.yaml; add one, reset (remove) one; confirm changes made outside
// this window that loosen the policy (they wait for a person: docs/policies.md).
import type { Decision, HeldChange } from '../backend/types';
import { clear, errorText, field, h, notice } from '../lib/dom';
import type { Page, PageContext } from './page';

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
    h('p', {}, 'A rule says whether matching tools run (allow), wait for you (ask) or are hidden (deny). The most specific rule wins; see docs/policies.md.'),
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
        view.rules.length
          ? h(
              'table',
              {},
              h('thead', {}, h('tr', {}, ['Pattern', 'Connection', 'Decision', ''].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                view.rules.map((r) =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row' }, h('code', {}, r.pattern)),
                    h('td', {}, r.connection ?? 'any'),
                    h('td', {}, h('span', { class: `badge ${r.decision}` }, r.decision)),
                    h(
                      'td',
                      { class: 'actions' },
                      h(
                        'button',
                        {
                          type: 'button',
                          'aria-label': `Reset ${r.pattern}${r.connection ? ` for ${r.connection}` : ''}`,
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
                        'Reset',
                      ),
                    ),
                  ),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No rules: tool annotations decide (destructive tools ask).'),
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Policies', element, refresh };
}
