// Upstream text as a person may be shown it (docs/tool-text.md): control, bidi, invisible and
// Unicode tag characters written as `\u{…}` (lower-case hex), the same form the CLI prints
// (capa-domain's tool_text::visible), so that what a person reads is what a model reads.
import type { TextRule } from '../backend/types';

/** Whether `code` (a code point) must not be shown raw. Line breaks and tabs are layout. */
export function hidesOrActs(code: number): boolean {
  if (code === 0x0a || code === 0x09) return false;
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x00ad ||
    code === 0x034f ||
    code === 0x061c ||
    code === 0x115f ||
    code === 0x1160 ||
    code === 0x17b4 ||
    code === 0x17b5 ||
    (code >= 0x180b && code <= 0x180f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x206f) ||
    code === 0x3164 ||
    code === 0xfeff ||
    code === 0xffa0 ||
    (code >= 0xfff0 && code <= 0xfff8) ||
    (code >= 0x1d173 && code <= 0x1d17a) ||
    (code >= 0xe0000 && code <= 0xe0fff)
  );
}

/** `text` with every character a person cannot see (or that would act) written `\u{…}`. */
export function visibleText(text: string): string {
  let shown = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    shown += hidesOrActs(code) ? `\\u{${code.toString(16)}}` : char;
  }
  return shown;
}

/** The short names the Tools page gives the rules. */
export const RULE_NAMES: Record<TextRule, string> = {
  hidden_characters: 'hides characters',
  control_characters: 'terminal control characters',
  addresses_the_model: 'addresses the model',
  names_other_tools: 'names other tools',
  credential_path: 'names a credential file',
};

/** A rule's short name, or its code for a rule this UI does not know yet. */
export function ruleName(rule: string): string {
  return (RULE_NAMES as Record<string, string>)[rule] ?? rule;
}
