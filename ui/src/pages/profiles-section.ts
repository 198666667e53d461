// The Clients page's Profiles card (docs/profiles.md): the hub's own profile and each named one,
// with its mode, the sources and skills it serves, what it tightens, and how a client reaches it
// (the stdio command and the HTTP endpoint). Profiles are edited in the capabilities file, not
// here; a client is connected to one with the Profile picker of its card below.
import type { ProfileListing } from '../backend/types';
import { h } from '../lib/dom';

/** `all`, `none` or the names. */
function names(list: string[] | undefined): string {
  if (list === undefined) return 'all';
  return list.length === 0 ? 'none' : list.join(', ');
}

export function profilesSection(profiles: ProfileListing[], origin: string, capa: string | null): HTMLElement | null {
  // Only the default profile: nothing to choose between.
  if (profiles.length <= 1) return null;
  const row = (profile: ProfileListing) => {
    const mode = profile.mode === profile.exposure ? profile.mode : `${profile.mode} (${profile.exposure})`;
    const tightens = [
      profile.ask?.length ? `asks: ${profile.ask.join(', ')}` : null,
      profile.deny?.length ? `hides: ${profile.deny.join(', ')}` : null,
      Object.keys(profile.limits).length
        ? `limits: ${Object.entries(profile.limits).map(([k, v]) => `${k} ${v}`).join(', ')}`
        : null,
    ].filter((t): t is string => t !== null);
    return h(
      'tr',
      { 'data-profile': profile.name },
      h('th', { scope: 'row' }, h('code', {}, profile.name), profile.default ? h('span', { class: 'badge' }, 'default') : null),
      h(
        'td',
        {},
        h('p', {}, mode),
        profile.description && !profile.default ? h('p', { class: 'hint' }, profile.description) : null,
      ),
      h('td', {}, h('p', {}, `sources: ${names(profile.sources)}`), h('p', { class: 'hint' }, `skills: ${names(profile.skills)}`)),
      h('td', {}, tightens.length ? tightens.map((t) => h('p', { class: 'hint' }, t)) : h('span', { class: 'hint' }, '—')),
      h(
        'td',
        {},
        h('p', {}, h('code', {}, [capa ?? 'capa', ...profile.stdioArgs].join(' '))),
        h('p', { class: 'hint' }, h('code', {}, `${origin}${profile.path}`)),
      ),
    );
  };
  return h(
    'section',
    { class: 'card profiles', 'aria-label': 'Profiles' },
    h('h3', {}, 'Profiles'),
    h(
      'p',
      { class: 'hint' },
      'What one client sees: a mode, some of the sources and skills, stricter rules, lower limits. Declared under “profiles:” in a capabilities file; a client is connected to one with the Profile picker of its card.',
    ),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ['Profile', 'Mode', 'Serves', 'Tightens', 'Reached with'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, profiles.map(row)),
    ),
  );
}
