// The approval popup under a real window manager (issue 41): on a display of its own (Xvfb) with
// openbox, real X input through xdotool, the real app (debug build) driven by WebKitWebDriver.
//   - a popup that comes up on its own, while the settings window has the focus, takes the focus
//     (the window manager's active window is the popup);
//   - while its choices ignore input it shows so (a bar that runs out, buttons that look
//     unavailable); a burst of real typing longer than the moment decides nothing, and says why;
//   - once they take input, the person's first real click on "Approve once" decides;
//   - a click that brings the popup back from another window is not lost silently: it says "Not
//     yet", and the next click, once the choices take input, decides.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { connectHttp, makeSandbox, removeSandboxes, writeCapabilities, cleanup, freePort, sleep, waitFor } from '../node/support.mjs';
import { skipOrFail } from '../node/require.mjs';
import { APP, DRIVER, SCREENSHOTS, desktopLock, endHubOf, execute, output, ownDisplay, skip as appSkip, start } from './app.mjs';
import { WebDriver } from './webdriver.mjs';

const missing = ['/usr/bin/Xvfb', '/usr/bin/openbox', '/usr/bin/xdotool', '/usr/bin/xprop']
  .filter((bin) => !existsSync(bin))
  .map((bin) => `no ${bin} (scripts/setup --test installs it)`);
const skip = appSkip || skipOrFail(missing);

/** Code whose one call asks (destructive), then returns what it deleted. */
const ASKS = 'return await demo.delete_note({ title: "nothing" }).catch((e) => e.code);';

describe('the approval popup under a window manager', { skip, timeout: 180000 }, () => {
  let unlock;
  let sandbox;
  let screen;
  let driver;
  let wd;
  let client;
  let env;

  const x = (...args) => output('/usr/bin/xdotool', args, env);
  const activeName = async () => (await x('getactivewindow', 'getwindowname').catch(() => '')).trim();

  before(async () => {
    unlock = await desktopLock();
    sandbox = await makeSandbox('capa-popup-focus-');
    screen = await ownDisplay({ ...sandbox.env, CAPA_NO_BROWSER: '1', CAPA_NO_DIALOG: '1' });
    env = screen.env;
  });

  after(async () => {
    await client?.close().catch(() => {});
    await wd?.deleteSession();
    await driver?.stop();
    await endHubOf(sandbox.dataDir);
    await screen?.stop();
    await cleanup();
    await removeSandboxes();
    await unlock?.();
  });

  /** The popup's window (X id) and where `selector`'s centre is in it, in window coordinates. */
  async function target(selector) {
    const id = (await x('search', '--onlyvisible', '--name', '^Approve a call')).trim().split('\n')[0];
    const at = await wd.script(`const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
      return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)];`);
    return { id, at };
  }

  const armed = () => wd.script('return document.querySelector(".queue")?.dataset.armed ?? null');
  let api;
  /** How many approvals wait, from the hub's API (not a window: switching windows in the driver
   * could move the focus this test watches). */
  const pending = async () => (await (await api('/api/approvals')).json()).pending.length;

  it('takes the focus, shows its moment of ignored input, ignores typing, and takes the first real click', async (t) => {
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    const port = await freePort();
    const driverPort = await freePort();
    driver = start(DRIVER, [`--port=${driverPort}`], { ...env, TAURI_WEBVIEW_AUTOMATION: 'true' });
    wd = new WebDriver(`http://127.0.0.1:${driverPort}`);
    await waitFor('WebKitWebDriver', async () => (await fetch(`${wd.base}/status`)).ok);
    await wd.newSession(APP, ['--config', configFile, '--http', `127.0.0.1:${port}`]);
    await waitFor('the hub', async () => existsSync(path.join(sandbox.dataDir, 'hub.json')));
    const [settings] = await waitFor('the settings window', async () => {
      const handles = await wd.handles();
      return handles.length === 1 ? handles : null;
    }, { timeoutMs: 20000 });
    await wd.switchTo(settings);
    await waitFor('the demo source ready', async () =>
      (await wd.invoke('state')).sources.find((s) => s.id === 'demo')?.state === 'ready', { timeoutMs: 20000 });
    await waitFor('the settings window to have the focus', async () => (await activeName()).includes('Capabilities') && !(await activeName()).startsWith('Approve'));

    const token = (await readFile(path.join(sandbox.dataDir, 'token'), 'utf8')).trim();
    api = (p) => fetch(`http://127.0.0.1:${port}${p}`, { headers: { Authorization: `Bearer ${token}` } });
    client = await connectHttp({ mcpUrl: `http://127.0.0.1:${port}/mcp`, token }, { name: 'e2e-popup-focus' });

    // 1. A popup that comes up on its own takes the focus from the settings window.
    const first = await execute(client, { code: ASKS });
    assert.equal(first.status, 'awaiting_approval', JSON.stringify(first));
    const popup = await waitFor('the popup', async () => (await wd.handles()).find((h) => h !== settings), { timeoutMs: 10000, intervalMs: 50 });
    await waitFor('the popup to be the active window', async () => (await activeName()).startsWith('Approve a call'), { timeoutMs: 5000, intervalMs: 50 });
    await wd.switchTo(popup);

    // 2. While its choices ignore input, it shows so; a burst of real typing longer than the
    //    moment (about 1.8 s of keys 150 ms apart, with 1, 2 and 4 among them) decides nothing.
    await waitFor('the card', async () => (await wd.script('return document.querySelectorAll(".choices button").length')) === 4, { timeoutMs: 10000, intervalMs: 20 });
    const typing = x('type', '--delay', '150', 'ok 1 2 4 then');
    await sleep(900);
    await wd.screenshot(path.join(SCREENSHOTS, 'desktop-approval-popup-arming.png'));
    await typing;
    const during = await wd.script(`return {
      armed: document.querySelector('.queue').dataset.armed,
      bar: document.querySelector('.arming .arming-bar') !== null,
      note: document.querySelector('.arming')?.textContent ?? '',
      unavailable: document.querySelector('button[data-choice="approve_once"]').getAttribute('aria-disabled'),
    };`);
    assert.deepEqual({ armed: during.armed, bar: during.bar, unavailable: during.unavailable }, { armed: 'false', bar: true, unavailable: 'true' }, JSON.stringify(during));
    assert.match(during.note, /^Not yet: wait a moment/, 'typing during the moment did not say why it did nothing');
    assert.equal(await pending(), 1, 'typing decided the call');

    // 3. Once the choices take input, the first real click decides.
    await waitFor('the choices to take input', async () => (await armed()) === 'true', { timeoutMs: 5000, intervalMs: 50 });
    const once = await target('button[data-choice="approve_once"]');
    await x('mousemove', '--window', once.id, String(once.at[0]), String(once.at[1]), 'click', '1');
    await waitFor('the call decided by the first click', async () => (await pending()) === 0, { timeoutMs: 5000, intervalMs: 50 });
    const done = await execute(client, { resume: first.runId });
    assert.equal(done.status, 'completed', JSON.stringify(done));

    // 4. A click that brings the popup back from another window says "Not yet"; the next click,
    //    once the choices take input, decides.
    const second = await execute(client, { code: ASKS });
    assert.equal(second.status, 'awaiting_approval', JSON.stringify(second));
    const again = await waitFor('the second popup', async () => (await wd.handles()).find((h) => h !== settings), { timeoutMs: 10000, intervalMs: 50 });
    await wd.switchTo(again);
    await waitFor('the choices to take input', async () => (await armed()) === 'true', { timeoutMs: 10000, intervalMs: 50 });
    const deny = await target('button[data-choice="deny"]');
    const settingsId = (await x('search', '--onlyvisible', '--name', '^Capabilities')).trim().split('\n')[0];
    await x('windowactivate', '--sync', settingsId);
    await waitFor('the settings window to have the focus', async () => !(await activeName()).startsWith('Approve'));
    t.diagnostic(`before the click: active ${await activeName()}, popup focused ${await wd.script('return document.hasFocus()')}`);
    await x('mousemove', '--window', deny.id, String(deny.at[0]), String(deny.at[1]), 'click', '1');
    await sleep(300);
    t.diagnostic(`after the click: active ${await activeName()}, pending ${await pending()}, armed ${await armed()}, text ${await wd.script('return document.body.innerText')}`);
    const note = await waitFor('the popup to say the click came too early', async () => {
      const text = await wd.script('return document.querySelector(".arming")?.textContent ?? ""');
      return text.startsWith('Not yet') ? text : null;
    }, { timeoutMs: 3000, intervalMs: 20 });
    t.diagnostic(note);
    assert.equal(await pending(), 1, 'the click that focused the popup decided');
    await waitFor('the choices to take input again', async () => (await armed()) === 'true', { timeoutMs: 5000, intervalMs: 50 });
    await x('click', '1');
    await waitFor('the call denied by the next click', async () => (await pending()) === 0, { timeoutMs: 5000, intervalMs: 50 });
    const denied = await execute(client, { resume: second.runId });
    assert.equal(denied.result, 'denied', JSON.stringify(denied));
  });
});
