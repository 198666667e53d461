// The approval popup with its full context (issue 18), in the real app (debug build) under Xvfb,
// driven through WebKitWebDriver like desktop.test.mjs, through the warm popup (hidden, loaded
// ahead of time) that a call that asks only points at its run and shows: the app's path once
// popups come, here from start (CAPA_WARM_POPUP=1).
//   - a real client (TS SDK 1.x) connects through `capa mcp` (the bridge to the app's hub, the
//     way Claude Code connects), introducing itself as `e2e-popup-client 3.1.4`: the popup, and
//     `capa hub pending --json`, name it so;
//   - the popup shows the run's code with the line of the call marked, and a 197-character path
//     with its END in view (folded, the fold's hint in words, no tooltip over the text);
//   - the run link opens the run in the settings window, and the popup stays with its choices;
//   - Escape closes the popup without deciding: the call still waits; the tray's "1 pending
//     approval" brings it back, and a terminal's `capa hub deny` ends it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CAPA_BIN, makeSandbox, removeSandboxes, writeCapabilities, cleanup, freePort, sleep, waitFor } from '../node/support.mjs';
import { APP, DRIVER, SCREENSHOTS, TRAYER, desktopLock, endHubOf, execute, output, run, skip, start } from './app.mjs';
import { WebDriver } from './webdriver.mjs';

const ESCAPE = '\uE00C';
const CLIENT = { name: 'e2e-popup-client', version: '3.1.4' };
/** A 197-character path: what the popup showed only the first 60 characters of. */
const PATH = `/home/someone/projects/${'deeply/nested/'.repeat(11)}secrets/keys/id_rsa2`;
const CODE = [
  `const target = ${JSON.stringify(PATH)};`,
  'await demo.write_note({ title: target, text: "key" });',
  '// The next line asks: delete_note is destructive.',
  'const deleted = await demo.delete_note({ title: target }).catch((e) => e.code);',
  'return deleted;',
].join('\n');

describe('the approval popup with full context', { skip, timeout: 180000 }, () => {
  let sandbox;
  let driver;
  let wd;
  let client;
  let tray;
  let unlock;

  before(async () => {
    assert.equal(PATH.length, 197);
    unlock = await desktopLock();
    sandbox = await makeSandbox('capa-popup-');
    sandbox.env.CAPA_NO_BROWSER = '1';
    sandbox.env.CAPA_NO_DIALOG = '1';
    // A tray to start in (without one the settings window would open too: tray-host.test.mjs).
    tray = start(TRAYER, ['--edge', 'top', '--align', 'right', '--widthtype', 'request', '--height', '24'], sandbox.env);
    await waitFor('the tray', async () =>
      (await output('/usr/bin/xdotool', ['search', '--class', 'trayer'], sandbox.env).catch(() => '')).trim() !== '');
  });

  after(async () => {
    await client?.close().catch(() => {});
    await wd?.deleteSession();
    await driver?.stop();
    await endHubOf(sandbox.dataDir);
    await tray?.stop();
    await cleanup();
    await removeSandboxes();
    await unlock?.();
  });

  /** The window handle whose page is at `hash`, switched to; none when no window is. */
  async function windowAt(hash) {
    for (const handle of await wd.handles()) {
      await wd.switchTo(handle);
      if ((await wd.script('return location.hash')) === hash) return handle;
    }
    return null;
  }

  it('names the client, marks the call in the code, shows a long path\'s end; Escape closes it undecided', async (t) => {
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    const port = await freePort();
    const driverPort = await freePort();
    // A warm popup from start (by default the app keeps one only once popups come; docs/desktop.md,
    // "The warm popup").
    driver = start(DRIVER, [`--port=${driverPort}`], { ...sandbox.env, CAPA_WARM_POPUP: '1', TAURI_WEBVIEW_AUTOMATION: 'true' });
    wd = new WebDriver(`http://127.0.0.1:${driverPort}`);
    await waitFor('WebKitWebDriver', async () => (await fetch(`${wd.base}/status`)).ok);
    // In the tray, as a person's session starts it: the warm popup is its only window.
    await wd.newSession(APP, ['--config', configFile, '--http', `127.0.0.1:${port}`, '--background']);
    await waitFor('the hub', async () => existsSync(path.join(sandbox.dataDir, 'hub.json')));
    const warm = await waitFor('the warm popup to load', async () => {
      const handles = await wd.handles();
      return handles.length === 1 ? handles[0] : null;
    }, { timeoutMs: 20000 });
    await wd.switchTo(warm);
    assert.equal(await waitFor('the warm popup\'s route', async () => (await wd.script('return location.hash')) === '#/approve/' && 'yes'), 'yes');
    await waitFor('the demo source ready', async () =>
      (await wd.invoke('state')).sources.find((s) => s.id === 'demo')?.state === 'ready');
    await sleep(500); // the page has told the app it is ready (popup_ready)

    // The client connects through `capa mcp`, which bridges to the app's hub.
    const transport = new StdioClientTransport({ command: CAPA_BIN, args: ['mcp'], env: sandbox.env, stderr: 'pipe' });
    client = new Client(CLIENT);
    await client.connect(transport);
    const asked = Date.now();
    const paused = await execute(client, { code: CODE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    const runId = paused.runId;

    // The warm window is the popup: pointed at the run, shown, no new window.
    const popup = await waitFor('the popup at the run', async () => windowAt(`#/approve/${runId}`), { timeoutMs: 10000, intervalMs: 50 });
    assert.equal(popup, warm, 'the warm popup was not the one shown');
    const painted = await waitFor('the popup to report the call painted', async () => {
      const after = (await wd.invoke('state')).popup?.shownAfterMs;
      return typeof after === 'number' ? { after } : null;
    });
    t.diagnostic(`warm popup painted ${painted.after} ms after the call asked (${Date.now() - asked} ms to here)`);
    assert.match(driver.log(), /approval popup opened.*warm=true/, 'the app did not take the warm popup');

    // Which client asks, as it introduced itself through the bridge.
    const card = await waitFor('the card with its code', async () => wd.script(`
      const card = document.querySelector('.card.approval');
      const marked = [...document.querySelectorAll('.call-code .code-line.marked')];
      if (!card || marked.length === 0) return null;
      const fold = card.querySelector('pre.preview button.fold');
      return {
        client: card.querySelector('dd.client')?.textContent,
        reason: [...card.querySelectorAll('.facts dd')].map((d) => d.textContent).join(' | '),
        marked: marked.map((l) => [l.dataset.line, l.querySelector('.line-text').textContent]),
        note: card.querySelector('.call-lines')?.textContent,
        fold: fold && { text: fold.querySelector('.fold-text').textContent, hint: fold.querySelector('.fold-hint').textContent, title: fold.getAttribute('title') },
        choices: document.querySelectorAll('.choices button').length,
      };`), { timeoutMs: 10000 });
    assert.equal(card.client, `${CLIENT.name} ${CLIENT.version}`);
    assert.doesNotMatch(card.reason, /`/, 'a literal backtick in the facts');
    assert.deepEqual(card.marked, [['4', 'const deleted = await demo.delete_note({ title: target }).catch((e) => e.code);']]);
    assert.equal(card.note, 'Line 4 calls demo.delete_note.');
    // The path: folded, its end in view, in words rather than a tooltip over it.
    assert.ok(card.fold, 'the 197-character path is not folded');
    assert.ok(card.fold.text.includes(`${PATH.slice(-80)}"`), card.fold.text);
    assert.ok(card.fold.text.startsWith(`"${PATH.slice(0, 40)}…`), card.fold.text);
    assert.match(card.fold.text, /197 characters/);
    assert.equal(card.fold.hint, 'show all');
    assert.equal(card.fold.title, null);
    assert.equal(card.choices, 4);
    await waitFor('the popup\'s choices to take input', async () =>
      (await wd.script('return document.querySelector(".queue").dataset.armed')) === 'true', { timeoutMs: 5000, intervalMs: 50 });
    await wd.screenshot(path.join(SCREENSHOTS, 'desktop-approval-popup-context.png'));
    assert.equal(await wd.script(`const r = document.querySelector('.choices').getBoundingClientRect();
      return r.bottom <= window.innerHeight;`), true, 'the choices are not in view without scrolling');
    await wd.script('document.querySelector(".call-context").scrollIntoView()');
    await wd.screenshot(path.join(SCREENSHOTS, 'desktop-approval-popup-code.png'));
    await wd.script('window.scrollTo(0, 0)');
    // A click shows the whole value.
    await wd.click(await wd.find('//pre[contains(@class,"preview")]//button[contains(@class,"fold")]'));
    assert.equal(await wd.script('return document.querySelector("pre.preview .fold-text").textContent'), JSON.stringify(PATH));

    // `capa hub pending --json` names the client too.
    const listed = await run(CAPA_BIN, ['hub', 'pending', '--json'], sandbox.env);
    assert.equal(listed.code, 0, listed.out);
    assert.equal(JSON.parse(listed.out.slice(listed.out.indexOf('{'))).pending[0].client, `${CLIENT.name} ${CLIENT.version}`);

    // The run link opens the run in the settings window; the popup stays, with its choices.
    await wd.switchTo(popup);
    await wd.click(await wd.find('//dl[contains(@class,"facts")]//a[contains(@href,"#/runs/")]'));
    const settings = await waitFor('the settings window at the run', async () => {
      const handle = (await wd.handles()).find((h) => h !== popup);
      if (!handle) return null;
      await wd.switchTo(handle);
      return (await wd.script('return location.hash')) === `#/runs/${runId}` ? handle : null;
    }, { timeoutMs: 15000 });
    await waitFor('the run page to show the code', async () =>
      (await wd.script('return document.body.innerText')).includes('demo.delete_note'), { timeoutMs: 10000 });
    await wd.switchTo(popup);
    assert.equal(await wd.script('return location.hash'), `#/approve/${runId}`);
    assert.equal(await wd.script('return document.querySelectorAll(".choices button").length'), 4);

    // Escape closes the popup without deciding: the call still waits.
    await waitFor('the popup to have the focus', async () => (await wd.script('return document.hasFocus()')) === true, { timeoutMs: 5000 }).catch(() => {});
    for (let attempt = 0; attempt < 3 && (await wd.handles()).includes(popup); attempt++) {
      // The window goes while the driver releases the key: it may answer with an error then.
      await wd.press(ESCAPE, { closes: true }).catch(() => {});
      await waitFor('the popup to close', async () => !(await wd.handles()).includes(popup), { timeoutMs: 3000 }).catch(() => {});
    }
    assert.ok(!(await wd.handles()).includes(popup), 'Escape did not close the popup');
    await wd.switchTo(settings);
    const after = await wd.invoke('state');
    assert.equal(after.pending, 1, 'Escape decided the call');
    assert.deepEqual(after.pendingRuns, [runId]);
    // The tray's "1 pending approval" brings it back (it is not shown again on its own).
    assert.equal(await wd.invoke('open_next_approval'), runId);
    await waitFor('the popup again', async () => windowAt(`#/approve/${runId}`), { timeoutMs: 10000 });
    await wd.switchTo(settings);
    const denied = await run('script', ['-qec', `'${CAPA_BIN}' hub deny ${runId}`, '/dev/null'], sandbox.env);
    assert.equal(denied.code, 0, denied.out);
    await waitFor('the popup to close after the terminal decided', async () => (await wd.invoke('state')).popup === null, { timeoutMs: 10000 });
    const done = await execute(client, { resume: runId });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result, 'denied', JSON.stringify(done));
  });
});
