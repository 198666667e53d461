// The tool tester of a source's page: pick one of its tools, fill a form made from its input
// schema (or raw JSON), and run it through `POST /api/call` — the same authorizer and policy as
// any call: a denied tool is refused, one that asks waits for a decision (shown here, and in the
// popup and on the Pending page), results come back redacted and cut to `inlineResultBytes`.
import type { Backend, CallAnswer, CallInput, PendingApproval, ToolListing } from '../backend/types';
import { decidedNote } from '../lib/choices';
import { clear, errorText, field, h, notice } from '../lib/dom';
import { collectArguments, initialValue, parseRawArguments, planForm, type FieldValue, type FormField } from '../lib/schema-form';
import { approvalCard } from './approval-card';

/** How long one request waits for a person's decision before asking again. */
const WAIT_MS = 20_000;

export interface ToolTester {
  element: HTMLElement;
  /** The source's tools changed (or loaded). */
  setTools(tools: ToolListing[]): void;
  dispose(): void;
}

type Input = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

function inputFor(f: FormField): Input {
  const value = initialValue(f);
  const common = { name: f.name, required: f.required, 'aria-required': f.required ? 'true' : null, 'data-field': f.name };
  switch (f.kind) {
    case 'boolean':
      if (f.required) return h('input', { ...common, type: 'checkbox', checked: value === true });
      return h('select', common, h('option', { value: '' }, '(not set)'), h('option', { value: 'true', selected: value === 'true' }, 'true'), h('option', { value: 'false', selected: value === 'false' }, 'false'));
    case 'enum':
      return h(
        'select',
        common,
        f.required ? null : h('option', { value: '' }, '(not set)'),
        (f.options ?? []).map((o) => h('option', { value: String(o), selected: String(o) === value }, String(o))),
      );
    case 'strings':
      return h('textarea', { ...common, rows: 3 }, String(value));
    case 'number':
    case 'integer':
      return h('input', { ...common, type: 'number', step: f.kind === 'integer' ? '1' : 'any', value: String(value) });
    case 'string':
      return h('input', { ...common, type: 'text', autocomplete: 'off', value: String(value) });
  }
}

function bytesText(n: number): string {
  return n < 1024 ? `${n} bytes` : `${(n / 1024).toFixed(1)} KB`;
}

function jsonBlock(value: unknown, label: string): HTMLElement {
  return h('pre', { class: 'result-json', 'aria-label': label }, JSON.stringify(value, null, 2));
}

/** One content item of a result: text (JSON pretty-printed), images and audio by type and size. */
function contentElement(item: unknown): HTMLElement {
  const c = (item ?? {}) as Record<string, unknown>;
  const type = String(c.type ?? '');
  if (type === 'text') {
    const text = String(c.text ?? '');
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object') return jsonBlock(parsed, 'Result (JSON)');
    } catch {
      // Plain text.
    }
    return h('pre', { class: 'result-text', 'aria-label': 'Result text' }, text);
  }
  if (type === 'image' || type === 'audio') {
    const data = typeof c.data === 'string' ? c.data : '';
    const size = Math.floor((data.replace(/=+$/, '').length * 3) / 4);
    return h('p', { class: 'result-media' }, `${type === 'image' ? 'Image' : 'Audio'}: ${String(c.mimeType ?? 'unknown type')}, ${bytesText(size)}`);
  }
  if (type === 'resource' || type === 'resource_link') {
    const r = (type === 'resource' ? c.resource : c) as Record<string, unknown> | undefined;
    return h(
      'div',
      { class: 'result-resource' },
      h('p', {}, 'Resource ', h('code', {}, String(r?.uri ?? '')), r?.mimeType ? ` (${String(r.mimeType)})` : ''),
      typeof r?.text === 'string' ? h('pre', { class: 'result-text' }, r.text) : null,
    );
  }
  return jsonBlock(item, `Result item (${type || 'unknown'})`);
}

export function toolTester(backend: Backend, sourceId: string): ToolTester {
  let tools: ToolListing[] | null = null;
  let current: ToolListing | undefined;
  let fields: FormField[] = [];
  let inputs = new Map<string, Input>();
  let stopped = false;
  let waiting: string | null = null;

  const picker = h('select', { name: 'tool', 'aria-label': 'Tool' });
  const about = h('div', { class: 'hint' });
  const formFields = h('div', { class: 'tester-fields' });
  const rawToggle = h('input', { type: 'checkbox', name: 'raw', id: 'tester-raw' });
  const raw = h('textarea', { name: 'arguments', rows: 6, spellcheck: false, 'aria-label': 'Arguments (JSON)', class: 'mono' });
  const rawField = h('div', { hidden: true }, field('Arguments (JSON)', raw, 'A JSON object; checked before it is sent.'));
  const rawNote = h('p', { class: 'hint', hidden: true });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
  const output = h('div', { class: 'tester-output', 'aria-live': 'polite' });
  const empty = h('p', { class: 'empty', hidden: true }, 'This source has no tools now: it may still be starting, or be down (see its status and log).');
  const form = h(
    'form',
    // The tester checks the fields itself and names what is wrong (hidden fields too).
    { 'aria-label': `Test a tool of ${sourceId}`, novalidate: true },
    field('Tool', picker),
    about,
    h('p', { class: 'toggle' }, rawToggle, h('label', { for: 'tester-raw' }, 'Edit the arguments as raw JSON')),
    rawNote,
    formFields,
    rawField,
    h('p', {}, run),
  );
  const element = h(
    'section',
    { class: 'card tester', 'aria-labelledby': 'tester-heading' },
    h('h3', { id: 'tester-heading' }, 'Test a tool'),
    h('p', { class: 'hint' }, 'Runs the tool as any client would: your policies apply (a denied tool is refused, one that asks waits for your decision), and the call is recorded in the history.'),
    empty,
    form,
    output,
  );

  const formValues = (): Record<string, FieldValue> =>
    Object.fromEntries([...inputs].map(([name, input]) => [name, input instanceof HTMLInputElement && input.type === 'checkbox' ? input.checked : input.value]));

  const syncRaw = () => {
    formFields.hidden = rawToggle.checked;
    rawField.hidden = !rawToggle.checked;
  };
  rawToggle.addEventListener('change', () => {
    if (rawToggle.checked) {
      // What the form holds so far, each field on its own (one wrong field loses only itself).
      const values = formValues();
      const args = Object.assign({}, ...fields.map((f) => {
        const one = collectArguments([f], values);
        return 'args' in one ? one.args : {};
      }));
      raw.value = JSON.stringify(args, null, 2);
    }
    syncRaw();
  });

  const renderAbout = () => {
    clear(about);
    if (!current) return;
    about.append(
      current.description ?? '',
      ' ',
      h('span', { class: `badge ${current.policy}`, title: 'What your policy decides for this tool' }, `policy: ${String(current.policy)}`),
    );
  };

  const showTool = () => {
    current = tools?.find((t) => t.address === picker.value) ?? tools?.[0];
    clear(formFields);
    inputs = new Map();
    fields = [];
    renderAbout();
    if (!current) return;
    const plan = planForm(current.inputSchema);
    rawNote.hidden = !('raw' in plan);
    rawToggle.disabled = 'raw' in plan;
    if ('raw' in plan) {
      rawNote.textContent = plan.raw;
      rawToggle.checked = true;
      raw.value = '{}';
    } else {
      fields = plan.fields;
      for (const f of fields) {
        const input = inputFor(f);
        inputs.set(f.name, input);
        const label = f.required ? `${f.name} *` : f.name;
        const description = f.description?.trim().replace(/([^.!?])$/, '$1.');
        formFields.append(field(label, input, [description, f.required ? 'Required.' : ''].filter(Boolean).join(' ') || undefined));
      }
      if (!fields.length) formFields.append(h('p', { class: 'hint' }, 'This tool takes no arguments.'));
      raw.value = '{}';
    }
    syncRaw();
  };
  picker.addEventListener('change', () => {
    clear(output);
    showTool();
  });

  const showAnswer = (answer: CallAnswer, ms: number) => {
    clear(output);
    const timing = `${ms} ms`;
    if (answer.result) {
      const isError = answer.result.isError === true;
      const done = notice(isError ? 'error' : 'ok', isError ? `The tool answered with an error, in ${timing}.` : `Done in ${timing}.`);
      done.classList.add('tester-timing');
      done.dataset.ms = String(ms);
      output.append(done);
      for (const item of answer.result.content ?? []) output.append(contentElement(item));
      if (answer.result.structuredContent !== undefined) output.append(h('h4', {}, 'Structured content'), jsonBlock(answer.result.structuredContent, 'Structured content'));
      if (answer.cut) output.append(notice('info', 'The result was cut to the run limit for inline results (inlineResultBytes), as a model would see it.'));
      return;
    }
    const error = answer.error ?? { code: 'error', message: 'The hub gave no result.' };
    output.append(notice('error', `${error.code}: ${error.message}`));
    output.append(h('p', { class: 'hint tester-timing', 'data-ms': ms }, `Answered in ${timing}.`));
  };

  /** Waits for the decision on `pending` (made here, in the popup or on the Pending page), then
   * shows what the call answered. */
  const awaitDecision = async (call: CallInput, pending: PendingApproval) => {
    waiting = pending.id;
    const status = h('div');
    const stop = h('button', { type: 'button' }, 'Stop waiting');
    let decided = false;
    const card = approvalCard(pending, (choice) => {
      if (decided) return;
      decided = true;
      void backend.decide({ approvalId: pending.id }, choice).then(
        () => status.replaceChildren(notice('ok', `${decidedNote(choice)} ${pending.address}`)),
        (error: unknown) => {
          decided = false;
          status.replaceChildren(notice('error', errorText(error)));
        },
      );
    });
    stop.addEventListener('click', () => {
      waiting = null;
      void backend.callTool({ ...call, approval: pending.id, abandon: true });
      clear(output);
      output.append(notice('info', 'Stopped waiting; the call did not run.'));
    });
    clear(output);
    output.append(notice('info', `Waiting for a decision: ${pending.reason}. Decide here, in the popup, or on the Pending page.`), status, card, h('p', {}, stop));
    while (!stopped && waiting === pending.id) {
      const started = performance.now();
      let answer: CallAnswer;
      try {
        answer = await backend.callTool({ ...call, approval: pending.id, waitMs: WAIT_MS });
      } catch (error) {
        if (waiting !== pending.id) return;
        output.append(notice('error', errorText(error)));
        waiting = null;
        return;
      }
      if (stopped || waiting !== pending.id) return;
      if (answer.error?.code === 'approval_pending') continue;
      waiting = null;
      showAnswer(answer, answer.ms ?? Math.round(performance.now() - started));
    }
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!current) return;
    const collected = rawToggle.checked ? parseRawArguments(raw.value) : collectArguments(fields, formValues());
    if ('error' in collected) {
      clear(output);
      output.append(notice('error', collected.error));
      return;
    }
    const call: CallInput = { address: current.address, arguments: collected.args };
    waiting = null;
    run.disabled = true;
    clear(output);
    output.append(notice('info', `Running ${current.address}…`));
    const started = performance.now();
    try {
      const answer = await backend.callTool(call);
      const ms = answer.ms ?? Math.round(performance.now() - started);
      if (answer.approval && (answer.error?.code === 'approval_required' || answer.error?.code === 'approval_pending')) {
        run.disabled = false;
        await awaitDecision(call, answer.approval);
        return;
      }
      showAnswer(answer, ms);
    } catch (error) {
      clear(output);
      output.append(notice('error', errorText(error)));
    } finally {
      run.disabled = false;
    }
  });

  return {
    element,
    setTools(next) {
      const before = tools;
      const same = before !== null && next.length === before.length && next.every((t, i) => t.address === before[i]?.address && t.policy === before[i]?.policy);
      tools = next;
      if (same) return;
      const keep = picker.value;
      picker.replaceChildren(...next.map((t) => h('option', { value: t.address, selected: t.address === keep }, t.remoteName)));
      form.hidden = next.length === 0;
      empty.hidden = next.length > 0;
      // The form is made again only when the tool shown changed: never lose what a person typed.
      const shown = next.find((t) => t.address === picker.value);
      if (!current || !shown || current.address !== shown.address) {
        showTool();
      } else {
        current = shown;
        renderAbout();
      }
    },
    dispose() {
      stopped = true;
      waiting = null;
    },
  };
}
