// The shell: navigation, the router on `location.hash`, live updates from `/api/events`.
import type { Backend, HubEvent } from './backend/types';
import { clear, errorText, h, notice } from './lib/dom';
import { parseHash, type Route } from './lib/router';
import { approvePage } from './pages/approve';
import { clientsPage } from './pages/clients';
import { connectionsPage } from './pages/connections';
import { importPage } from './pages/import';
import type { Page, PageContext } from './pages/page';
import { pendingPage } from './pages/pending';
import { policiesPage } from './pages/policies';
import { runsPage } from './pages/runs';
import { sourcePage } from './pages/source';
import { sourcesPage } from './pages/sources';
import { toolsPage } from './pages/tools';
import { welcomePage } from './pages/welcome';

const PAGES: Record<string, { label: string; make: (ctx: PageContext) => Page; nav: boolean }> = {
  welcome: { label: 'Welcome', make: welcomePage, nav: true },
  clients: { label: 'Clients', make: clientsPage, nav: true },
  // `#/sources/<id>`: one source's status, log and tool tester.
  sources: { label: 'Sources', make: (ctx) => (ctx.route.params[0] ? sourcePage(ctx) : sourcesPage(ctx)), nav: true },
  import: { label: 'Import', make: importPage, nav: true },
  tools: { label: 'Tools', make: toolsPage, nav: true },
  connections: { label: 'Connections', make: connectionsPage, nav: true },
  policies: { label: 'Policies', make: policiesPage, nav: true },
  runs: { label: 'Runs', make: runsPage, nav: true },
  pending: { label: 'Pending', make: pendingPage, nav: true },
  approve: { label: 'Approve', make: approvePage, nav: false },
};

/** Without events for this long, the pending views poll instead. */
const POLL_MS = 5000;

export function startApp(root: HTMLElement, backend: Backend): void {
  const badge = h('span', { class: 'count', hidden: true, 'aria-label': 'pending approvals' });
  const paused = h('span', { class: 'badge deny', hidden: true }, 'approvals paused: calls that ask are denied');
  const links = Object.entries(PAGES)
    .filter(([, p]) => p.nav)
    .map(([key, p]) => h('a', { href: `#/${key}`, 'data-page': key }, p.label, key === 'pending' ? badge : null));
  const nav = h('nav', { 'aria-label': 'Main' }, links);
  const header = h('header', {}, h('h1', {}, 'Capabilities'), nav, paused);
  const main = h('main', { id: 'main', tabindex: '-1' });
  root.replaceChildren(h('a', { href: '#main', class: 'skip' }, 'Skip to content'), header, main);
  // In the app on a desktop that shows no tray icons (stock GNOME, a bare X server): say once, on
  // top of the settings window, why it minimises instead of closing, and keep Quit one click away.
  if (backend.kind === 'tauri' && !location.hash.startsWith('#/approve')) {
    void backend.trayHost().then(
      (host) => {
        if (host === 'none') header.after(noTrayBanner(backend));
      },
      () => undefined,
    );
  }

  let page: Page | null = null;
  let lastEvent = '';
  let lastEventAt = 0;

  const showCounts = (event: HubEvent) => {
    badge.hidden = event.pending === 0;
    badge.textContent = String(event.pending);
    paused.hidden = !event.paused;
  };

  const mount = async (route: Route) => {
    page?.dispose?.();
    const spec = PAGES[route.page] ?? PAGES.welcome!;
    const popup = route.page === 'approve';
    header.hidden = popup;
    document.body.classList.toggle('popup', popup);
    for (const link of links) {
      if (link.dataset.page === route.page) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    page = spec.make({ backend, route });
    document.title = `${page.title} · Capabilities`;
    clear(main);
    main.append(page.element);
    await page.refresh();
  };

  const refreshCounts = async () => {
    try {
      const view = await backend.approvals();
      showCounts({ pending: view.pending.length, paused: view.paused });
    } catch (error) {
      clear(main);
      main.append(notice('error', errorText(error)));
    }
  };

  window.addEventListener('hashchange', () => void mount(parseHash(location.hash)));
  backend.subscribe((event) => {
    lastEventAt = Date.now();
    showCounts(event);
    const key = JSON.stringify(event);
    if (key !== lastEvent) {
      lastEvent = key;
      void page?.refresh();
    }
  });
  setInterval(() => {
    if (Date.now() - lastEventAt < 6 * POLL_MS) return;
    const route = parseHash(location.hash);
    void refreshCounts();
    if (route.page === 'pending' || route.page === 'approve') void page?.refresh();
  }, POLL_MS);

  void mount(parseHash(location.hash));
  void refreshCounts();
}

/** The settings window's note on a desktop without a tray host (src-tauri/src/tray_host.rs). */
function noTrayBanner(backend: Backend): HTMLElement {
  const quit = h('button', { type: 'button', class: 'danger' }, 'Quit Capabilities');
  quit.addEventListener('click', () => void backend.quitApp());
  return h(
    'div',
    { class: 'no-tray', role: 'note' },
    h(
      'p',
      {},
      'This desktop shows no tray icons, so Capabilities stays in the taskbar: closing this window minimises it, and the hub keeps serving your clients. ',
      'On GNOME, the “AppIndicator and KStatusNotifierItem Support” extension adds a tray.',
    ),
    quit,
  );
}
