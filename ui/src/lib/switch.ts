// An on/off switch: a real checkbox with role=switch, named by `label` (for screen readers and
// tests: "Source github", "Tool github.create_issue"), with the state written beside it. While
// its change is being applied it is disabled; a failed change puts it back.
import type { PolicyView, ToolListing } from '../backend/types';
import { h } from './dom';

export interface SwitchOptions {
  /** The accessible name: what the switch turns on and off. */
  label: string;
  on: boolean;
  /** Shown instead of On/Off (for example "Waits for you"). */
  stateText?: string;
  /** Why it cannot be moved here; the switch is then disabled and this is its description. */
  locked?: string;
  /** Applies the change; a rejection puts the switch back. */
  onToggle: (on: boolean) => Promise<void>;
}

let nextId = 0;

/** The visible word for a switch's state. */
export function switchText(on: boolean): string {
  return on ? 'On' : 'Off';
}

export function switchControl(options: SwitchOptions): HTMLLabelElement {
  const id = `switch${++nextId}`;
  const input = h('input', {
    type: 'checkbox',
    role: 'switch',
    id,
    checked: options.on,
    disabled: options.locked !== undefined,
    'aria-label': options.label,
    'aria-describedby': options.locked !== undefined ? `${id}-why` : null,
  });
  const state = h('span', { class: 'switch-state', 'aria-hidden': 'true' }, options.stateText ?? switchText(options.on));
  const why = options.locked !== undefined ? h('small', { class: 'hint', id: `${id}-why` }, options.locked) : null;
  input.addEventListener('change', async () => {
    const wanted = input.checked;
    input.disabled = true;
    state.textContent = wanted ? 'Turning on…' : 'Turning off…';
    try {
      await options.onToggle(wanted);
      state.textContent = switchText(wanted);
    } catch {
      input.checked = !wanted;
      state.textContent = switchText(!wanted);
    } finally {
      input.disabled = false;
    }
  });
  return h('label', { class: `switch${options.on ? ' on' : ''}`, for: id }, input, state, why);
}

/** What a source's switch needs: the backend's switch call and a place to say how it went. */
export interface SourceSwitchContext {
  setSourceEnabled(id: string, enabled: boolean): Promise<{ state: string; message: string }>;
}

/** The on/off switch of a source row (only for sources the app may edit: the global file's).
 * `done` gets the hub's sentence (or the error) and refreshes the page. */
export function sourceSwitch(
  backend: SourceSwitchContext,
  source: { id: string; state: string; editable?: boolean },
  done: (kind: 'ok' | 'error', text: string) => Promise<void>,
): HTMLLabelElement | null {
  if (source.editable === false) return null;
  return switchControl({
    label: `Source ${source.id}`,
    on: source.state !== 'off',
    onToggle: async (on) => {
      try {
        const answer = await backend.setSourceEnabled(source.id, on);
        await done('ok', answer.message);
      } catch (error) {
        await done('error', error instanceof Error ? error.message : String(error));
        throw error;
      }
    },
  });
}

/** Whether the tool's server declares it read-only (an untrusted hint, never checked). */
export function declaredReadOnly(tool: ToolListing): boolean {
  return tool.annotations?.['readOnlyHint'] === true;
}

/** How a tool's switch stands, from its listing and the policy's rules and held changes. */
export function toolSwitch(tool: ToolListing, policy: PolicyView): { on: boolean; locked?: string; waiting: boolean } {
  const on = tool.policy !== 'deny';
  const exactDeny = policy.rules.some((r) => r.pattern === tool.address && !r.connection && r.decision === 'deny');
  const waiting = policy.held.some((c) => c.target === tool.address && !c.connection && c.from === 'deny');
  if (on || exactDeny || waiting) return { on, waiting };
  const rule = policy.rules.find((r) => r.decision === 'deny' && !r.connection && r.pattern !== tool.address);
  return {
    on,
    waiting,
    locked: rule ? `Off by the rule ${rule.pattern} (Policies page).` : 'Off by a rule on the Policies page.',
  };
}
