// One source at `#/sources/<id>`: its status, its live log (stderr and the hub's lines) and a
// tester for its tools. Live updates (`/api/events`) refresh the status and the tool list; the
// log polls on its own; neither touches what a person is typing in the tester. A source that
// signs in with OAuth shows its sign-ins and a Sign in button (lib/sign-in.ts). Its Sampling
// switch lets it ask the client's model (off until the person turns it on; docs/relay.md).
import type { SourceStatus } from '../backend/types';
import { clear, errorText, h, notice } from '../lib/dom';
import { href } from '../lib/router';
import { signInFlow, usesOAuth } from '../lib/sign-in';
import { needsSecret, secretNeeded, stateBadge } from '../lib/source-state';
import { switchControl } from '../lib/switch';
import type { Page, PageContext } from './page';
import { sourceLogPanel } from './source-log';
import { toolTester } from './tool-tester';

function facts(s: SourceStatus, sampling: HTMLElement | null): HTMLElement {
  const row = (term: string, value: Node | string | null | undefined) =>
    value === null || value === undefined || value === '' ? null : [h('dt', {}, term), h('dd', {}, value)];
  return h(
    'dl',
    { class: 'facts' },
    row('Status', stateBadge(s)),
    row('Command or URL', h('code', { class: 'wrap' }, s.target)),
    row('Tools', String(s.tools)),
    row('Restarts', s.restarts ? String(s.restarts) : null),
    row('Process', s.pid ? `pid ${s.pid}` : null),
    row('Protocol', s.protocol_version ?? null),
    row('Connections', s.connections?.length ? s.connections.join(', ') : null),
    row('Declared in', s.file ?? (s.origin === 'demo' ? 'built in' : null)),
    row('Sampling', sampling),
    // An OAuth source waiting for a sign-in says so in its sign-in panel, with the button.
    row(
      'Last error',
      needsSecret(s) ? secretNeeded(s) : s.last_error && !(s.state === 'needs_connection' && usesOAuth(s)) ? h('span', { class: 'error-text' }, s.last_error) : null,
    ),
  );
}

export function sourcePage({ backend, route }: PageContext): Page {
  const id = route.params[0] ?? '';
  const status = h('div', { class: 'card source-status' });
  const message = h('div');
  const log = sourceLogPanel(backend, id);
  const tester = toolTester(backend, id);
  const restart = h('button', { type: 'button' }, 'Restart');
  restart.addEventListener('click', async () => {
    clear(message);
    try {
      await backend.restartSource(id);
      message.append(notice('ok', `Restarted ${id}.`));
      await refresh();
    } catch (error) {
      message.append(notice('error', errorText(error)));
    }
  });
  const signIns = signInFlow(backend, { message, refresh: () => refresh(), panels: true });
  // The built-in demo never asks the client's model.
  const samplingSwitch = (source: SourceStatus): HTMLElement | null =>
    source.origin === 'demo'
      ? null
      : h(
          'div',
          {},
          switchControl({
            label: `Sampling from ${id}`,
            on: source.sampling_allowed === true,
            onToggle: async (on) => {
              clear(message);
              try {
                await backend.setSourceSampling(id, on);
                message.append(
                  notice('ok', on ? `${id} may now ask your client's model; each request is labelled with it.` : `${id} may no longer ask your client's model.`),
                );
              } catch (error) {
                message.append(notice('error', errorText(error)));
                throw error;
              }
            },
          }),
          h('small', { class: 'hint' }, "Lets this source ask your client's model for a completion (MCP sampling). Off until you turn it on."),
        );
  const element = h(
    'section',
    { class: 'source-page' },
    h('p', { class: 'crumbs' }, h('a', { href: href('sources') }, '← Sources')),
    h('h2', {}, 'Source ', h('code', {}, id)),
    message,
    status,
    h('div', { class: 'source-panels' }, log.element, tester.element),
    signIns.dialogs,
  );

  const refresh = async () => {
    try {
      const [sources, tools] = await Promise.all([backend.sources(), backend.tools()]);
      const source = sources.find((s) => s.id === id);
      clear(status);
      if (!source) {
        status.append(notice('error', `There is no source “${id}”. It may have been removed; see the Sources page.`));
        return;
      }
      status.append(h('div', { class: 'status-head' }, h('h3', {}, source.description ?? 'Status'), restart), facts(source, samplingSwitch(source)));
      const signIn = signIns.panel(source);
      if (signIn) status.append(signIn);
      tester.setTools(tools.filter((t) => t.source === id));
    } catch (error) {
      clear(status);
      status.append(notice('error', errorText(error)));
    }
  };
  return {
    title: `Source ${id}`,
    element,
    refresh,
    dispose() {
      log.dispose();
      tester.dispose();
      signIns.dispose();
    },
  };
}
