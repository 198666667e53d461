// Run history with filters (status, source, time), and a run's detail: code, calls with timings,
// logs, result, kept results, approvals and how each was decided.
import type { RunDetail, RunFilter, TimeWindow } from '../backend/types';
import { clear, errorText, formatTime, h, notice } from '../lib/dom';
import { decisionText, filterFromParams, filterToParams, RUN_STATUSES, TIME_WINDOWS } from '../lib/runs';
import { previewElement } from './approval-card';
import { keptResultsSection } from './run-handles';
import { resultTree } from './result-tree';
import type { Page, PageContext } from './page';

export function runsPage(ctx: PageContext): Page {
  return ctx.route.params[0] ? runDetailPage(ctx, ctx.route.params[0]) : runListPage(ctx);
}

function runListPage({ backend, route }: PageContext): Page {
  const filter: RunFilter = filterFromParams(route.query);
  const message = h('div');
  const list = h('div');
  const option = (value: string, label: string, selected: boolean) => h('option', { value, selected }, label);
  const status = h('select', { name: 'status', 'aria-label': 'Status' }, option('', 'Any status', !filter.status), RUN_STATUSES.map((s) => option(s, s, filter.status === s)));
  const source = h('select', { name: 'source', 'aria-label': 'Source' }, option('', 'Any source', !filter.source));
  const time = h('select', { name: 'time', 'aria-label': 'Time' }, TIME_WINDOWS.map((w) => option(w.value, w.label, (filter.time ?? 'all') === w.value)));
  const onChange = () => {
    const next: RunFilter = { time: time.value as TimeWindow };
    if (status.value) next.status = status.value;
    if (source.value) next.source = source.value;
    location.hash = `#/runs${filterToParams(next)}`;
  };
  for (const select of [status, source, time]) select.addEventListener('change', onChange);

  const element = h(
    'section',
    {},
    h('h2', {}, 'Runs'),
    h('form', { class: 'filters', 'aria-label': 'Filters', onsubmit: (e: Event) => e.preventDefault() }, status, source, time),
    message,
    list,
  );
  const refresh = async () => {
    try {
      const [runs, sources] = await Promise.all([backend.runs(filter), backend.sources()]);
      if (source.options.length === 1) {
        source.append(...sources.map((s) => option(s.id, s.id, filter.source === s.id)));
      }
      clear(list);
      list.append(
        runs.length
          ? h(
              'table',
              {},
              h('thead', {}, h('tr', {}, ['Run', 'Status', 'Tools', 'Started', 'Client', 'Attempts'].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                runs.map((r) =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row' }, h('a', { href: `#/runs/${encodeURIComponent(r.id)}` }, h('code', {}, r.id))),
                    h('td', {}, h('span', { class: `badge run-${r.status}` }, r.status)),
                    h('td', {}, (r.addresses ?? []).map((a) => h('code', { class: 'tag' }, a))),
                    h('td', {}, formatTime(r.createdAtMs)),
                    h('td', {}, r.client ?? ''),
                    h('td', { class: 'num' }, r.attempts === undefined ? '' : String(r.attempts)),
                  ),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No runs match.'),
      );
    } catch (error) {
      clear(list);
      list.append(notice('error', errorText(error)));
    }
  };
  return { title: 'Runs', element, refresh };
}

/** A journaled value as formatted JSON: `{text, truncated}` and strings holding JSON are parsed. */
function jsonValue(value: unknown): unknown {
  if (value && typeof value === 'object' && typeof (value as { text?: unknown }).text === 'string') {
    const bounded = value as { text: string; truncated?: boolean };
    return bounded.truncated ? bounded.text : jsonValue(bounded.text);
  }
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function runDetailPage({ backend }: PageContext, id: string): Page {
  const body = h('div');
  const element = h('section', {}, h('p', {}, h('a', { href: '#/runs' }, '← All runs')), h('h2', {}, 'Run ', h('code', {}, id)), body);
  const render = (run: RunDetail) => {
    clear(body);
    const envelope = run.envelope ?? {};
    body.append(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Status'),
        h('dd', {}, h('span', { class: `badge run-${run.status}` }, run.status)),
        h('dt', {}, 'Started'),
        h('dd', {}, formatTime(run.createdAtMs)),
        h('dt', {}, 'Client'),
        h('dd', {}, run.client ?? ''),
        h('dt', {}, 'Attempts'),
        h('dd', {}, String(run.attempts ?? '')),
      ),
      ...(STATE_NOTES[run.status] ? [h('p', { class: 'notice info' }, STATE_NOTES[run.status])] : []),
      h('h3', {}, 'Code'),
      h('pre', { class: 'code' }, run.code ?? '(not kept)'),
      h('h3', {}, 'Calls'),
      run.calls?.length
        ? h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ['#', 'Tool', 'Connection', 'Time', 'Outcome', 'Arguments'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              run.calls.map((c) =>
                h(
                  'tr',
                  {},
                  h('td', { class: 'num' }, String(c.index)),
                  h('th', { scope: 'row' }, h('code', {}, c.address)),
                  h('td', {}, c.connection ?? ''),
                  h('td', { class: 'num' }, c.ms === undefined ? '' : `${c.ms} ms`),
                  h('td', {}, c.inFlight ? h('span', { class: 'badge ask' }, 'no answer') : c.ok === false ? h('span', { class: 'badge deny' }, 'error') : h('span', { class: 'badge allow' }, 'ok'), previewElement(jsonValue(c.outcome))),
                  h('td', {}, previewElement(jsonValue(c.arguments))),
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No calls.'),
      ...(run.logs?.length ? [h('h3', {}, 'Logs'), h('pre', { class: 'code' }, run.logs.join('\n'))] : []),
      h('h3', {}, 'Result'),
      resultSection(envelope),
      ...keptResultsSection(backend, run),
      h('h3', {}, 'Approvals'),
      run.approvals?.length
        ? h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ['Tool', 'Decision', 'Decided by', 'When'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              run.approvals.map((a) =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row' }, h('code', {}, a.address)),
                  h('td', {}, decisionText(a.status, a.scope)),
                  h('td', {}, a.decidedVia ?? ''),
                  h('td', {}, formatTime(a.decidedAtMs)),
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No approvals in this run.'),
    );
  };
  const refresh = async () => {
    try {
      render(await backend.run(id));
    } catch (error) {
      clear(body);
      body.append(notice('error', errorText(error)));
    }
  };
  return { title: `Run ${id}`, element, refresh };
}


/** What a person should know about a run in this state, beside its badge. */
const STATE_NOTES: Record<string, string> = {
  interrupted:
    'Capabilities stopped while this run was executing. The model goes on with it by resuming the run; calls that were in flight when it stopped are not made again unless the tool only reads.',
  denied: 'A call of this run was denied, so the run ended there. Nothing after the denied call ran.',
  expired:
    'This run ended unfinished: an approval came too late, or the client did not come back within an hour of the decision. Nothing after that call ran; ask the model to start again if it is still needed.',
};

/** The run's result as a tree, or its error as sentences, or a line saying there is none. */
function resultSection(envelope: Record<string, unknown>): HTMLElement {
  const error = envelope.error as { code?: string; message?: string; hint?: string } | undefined;
  if (error) {
    return h(
      'div',
      { class: 'notice error', role: 'status' },
      h('p', {}, h('code', {}, error.code ?? 'error'), `: ${error.message ?? ''}`),
      error.hint ? h('p', {}, error.hint) : null,
    );
  }
  if ('result' in envelope) return resultTree(envelope.result, 'Result');
  return h('p', { class: 'empty' }, 'No result.');
}
