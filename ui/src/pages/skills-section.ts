// The Tools page's Skills card (docs/skills.md): each skill with its description, the tools it
// resolves to, where it is written and whether MCP clients are served it; a skill written as a
// SKILL.md shows its instructions folded. Skills are edited in their files, not here.
import type { SkillListing } from '../backend/types';
import { h } from '../lib/dom';

export function skillsSection(skills: SkillListing[]): HTMLElement | null {
  if (skills.length === 0) return null;
  const row = (skill: SkillListing) =>
    h(
      'tr',
      { 'data-skill': skill.name, class: skill.active ? null : 'off' },
      h(
        'th',
        { scope: 'row' },
        h('code', {}, skill.name),
        skill.active ? null : h('span', { class: 'badge' }, 'off'),
        skill.uri ? h('span', { class: 'badge', title: `Served to MCP clients as ${skill.uri} (the Skills extension).` }, 'MCP') : null,
      ),
      h(
        'td',
        {},
        h('p', {}, skill.description),
        skill.instructions
          ? h('details', {}, h('summary', {}, 'Instructions'), h('pre', { class: 'skill-instructions' }, skill.instructions))
          : null,
        h('p', { class: 'hint' }, skill.file),
      ),
      h(
        'td',
        {},
        skill.tools.length
          ? h('ul', { class: 'skill-tools' }, skill.tools.map((address) => h('li', {}, h('code', {}, address))))
          : h('span', { class: 'hint' }, skill.requires.length ? 'none served now' : 'instructions only'),
      ),
    );
  return h(
    'section',
    { class: 'card skills', 'aria-label': 'Skills' },
    h('h3', {}, 'Skills'),
    h(
      'p',
      { class: 'hint' },
      'Named tasks with instructions and the tools they need. Models read one with describe("skill:<name>"); MCP clients that speak the Skills extension list them. Write one as skills/<name>/SKILL.md beside your capabilities file.',
    ),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ['Skill', 'What it is for', 'Tools'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, skills.map(row)),
    ),
  );
}
