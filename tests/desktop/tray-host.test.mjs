// The app with and without a tray host (issue 41), each on an Xvfb display of its own with a
// window manager (openbox), the real app (debug build) driven by WebKitWebDriver.
//   - No tray host (stock GNOME, a bare X server): started in the background, the settings window
//     opens anyway, minimised; it says why and offers "Quit Capabilities"; closing it minimises it
//     instead (the app stays findable in the taskbar); Quit ends the app and its hub.
//   - An XEmbed tray (trayer): `state` says so, no note is shown, and closing the settings window
//     hides it while the app and its hub go on in the tray.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { makeSandbox, removeSandboxes, writeCapabilities, cleanup, freePort, sleep, waitFor } from '../node/support.mjs';
import { skipOrFail } from '../node/require.mjs';
import { APP, DRIVER, SCREENSHOTS, alive, desktopLock, endHubOf, output, ownDisplay, skip as appSkip, start } from './app.mjs';
import { WebDriver } from './webdriver.mjs';

const missing = ['/usr/bin/Xvfb', '/usr/bin/openbox', '/usr/bin/trayer', '/usr/bin/xprop', '/usr/bin/xdotool']
  .filter((bin) => !existsSync(bin))
  .map((bin) => `no ${bin} (scripts/setup --test installs it)`);
const skip = appSkip || skipOrFail(missing);

describe('the app with and without a tray host', { skip, timeout: 240000 }, () => {
  let unlock;
  let sandbox;
  let screen;
  let driver;
  let wd;
  let tray;

  before(async () => {
    unlock = await desktopLock();
    sandbox = await makeSandbox('capa-tray-host-');
  });

  after(async () => {
    await wd?.deleteSession().catch(() => {});
    await driver?.stop();
    await endHubOf(sandbox.dataDir);
    await tray?.stop();
    await screen?.stop();
    await cleanup();
    await removeSandboxes();
    await unlock?.();
  });

  const hubJson = () => path.join(sandbox.dataDir, 'hub.json');


  /** Starts the app on `screen` through a fresh driver; resolves its settings window's handle. */
  async function startApp(args) {
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    const port = await freePort();
    const driverPort = await freePort();
    driver = start(DRIVER, [`--port=${driverPort}`], { ...screen.env, TAURI_WEBVIEW_AUTOMATION: 'true' });
    wd = new WebDriver(`http://127.0.0.1:${driverPort}`);
    await waitFor('WebKitWebDriver', async () => (await fetch(`${wd.base}/status`)).ok);
    await wd.newSession(APP, ['--config', configFile, '--http', `127.0.0.1:${port}`, ...args]);
    await waitFor('the hub', async () => existsSync(hubJson()));
    const [settings] = await waitFor('the settings window', async () => {
      const handles = await wd.handles();
      return handles.length === 1 ? handles : null;
    }, { timeoutMs: 20000 });
    await wd.switchTo(settings);
    return settings;
  }

  /** Whether the window titled like the settings window is minimised (openbox marks it hidden). */
  async function minimised() {
    const ids = (await output('/usr/bin/xdotool', ['search', '--name', 'Capabilities$'], screen.env).catch(() => '')).trim().split('\n').filter(Boolean);
    for (const id of ids) {
      const state = await output('/usr/bin/xprop', ['-id', id, '_NET_WM_STATE'], screen.env).catch(() => '');
      if (state.includes('_NET_WM_STATE_HIDDEN')) return true;
    }
    return false;
  }

  it('without a tray host: opens minimised, says why, minimises on close, and quits from the window', async (t) => {
    screen = await ownDisplay({ ...sandbox.env, CAPA_NO_BROWSER: '1', CAPA_NO_DIALOG: '1' });
    t.diagnostic(`display ${screen.display}`);
    await startApp(['--background']);
    t.diagnostic('the app started');
    assert.equal((await wd.invoke('state')).trayHost, 'none');
    await waitFor('the settings window minimised', minimised, { timeoutMs: 10000 });
    const note = await waitFor('the note on a desktop without a tray', async () =>
      wd.script('return document.querySelector(".no-tray")?.textContent ?? null'), { timeoutMs: 10000 });
    assert.match(note, /This desktop shows no tray icons/);
    assert.match(note, /AppIndicator/);
    await output('/usr/bin/xdotool', ['search', '--name', 'Capabilities$', 'windowactivate', '--sync'], screen.env).catch(() => {});
    await wd.screenshot(path.join(SCREENSHOTS, 'desktop-no-tray.png'));

    // Closing the window minimises it: the app stays in the taskbar, its window still there.
    await output('/usr/bin/xdotool', ['search', '--name', 'Capabilities$', 'windowactivate', '--sync'], screen.env).catch(() => {});
    await waitFor('the window shown again', async () => !(await minimised()), { timeoutMs: 5000 });
    await wd.invoke('close_window').catch(() => {});
    await waitFor('the settings window minimised on close', minimised, { timeoutMs: 5000 });
    assert.equal((await wd.handles()).length, 1, 'the settings window was closed, leaving nothing to find');

    // Quit, one click away in the window.
    const { pid } = JSON.parse(await readFile(hubJson(), 'utf8'));
    await wd.click(await wd.find('//div[contains(@class,"no-tray")]//button[text()="Quit Capabilities"]')).catch(() => {});
    await waitFor('the app to quit', async () => !alive(pid), { timeoutMs: 15000 });
    await waitFor('hub.json removed', async () => !existsSync(hubJson()), { timeoutMs: 5000 });
    await wd.deleteSession().catch(() => {});
    await driver.stop();
    wd = null;
    await screen.stop();
    screen = null;
  });

  it('with an XEmbed tray: no note, and closing the settings window keeps the app in the tray', async () => {
    screen = await ownDisplay({ ...sandbox.env, CAPA_NO_BROWSER: '1', CAPA_NO_DIALOG: '1' });
    tray = start('/usr/bin/trayer', ['--edge', 'top', '--align', 'right', '--widthtype', 'request', '--height', '24'], screen.env);
    await waitFor('trayer to own the tray selection', async () =>
      (await output('/usr/bin/xdotool', ['search', '--class', 'trayer'], screen.env).catch(() => '')).trim() !== '', { timeoutMs: 10000 });
    await sleep(300);
    await startApp([]);
    assert.equal((await wd.invoke('state')).trayHost, 'x_embed');
    await sleep(500);
    assert.equal(await wd.script('return document.querySelector(".no-tray") === null'), true, 'the no-tray note shows with a tray');
    const { pid } = JSON.parse(await readFile(hubJson(), 'utf8'));
    await wd.invoke('close_window').catch(() => {});
    await waitFor('the settings window to close', async () => (await wd.handles()).length === 0, { timeoutMs: 10000 });
    assert.ok(alive(pid), 'the app ended with its window');
    const token = (await readFile(path.join(sandbox.dataDir, 'token'), 'utf8')).trim();
    const { url } = JSON.parse(await readFile(hubJson(), 'utf8'));
    const health = await fetch(`${url}/api/health`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(health.status, 200, 'the hub stopped with the window');
  });
});
