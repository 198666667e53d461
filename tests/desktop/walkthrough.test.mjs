// A new person's first session on a bare desktop (issue 41's "Done when"), in the real app (debug
// build) driven through WebKitWebDriver, without a terminal between the steps:
//   - the desktop has no tray host (openbox on an Xvfb of its own, no tray), no Secret Service
//     (the session bus address leads nowhere) and no browser (CAPA_NO_BROWSER=1: the app cannot
//     open one);
//   - Clients → Connect Claude Code → Apply writes ~/.claude.json, and Claude Code's own
//     `claude mcp list` reports the server connected;
//   - Sources → Add source: a local server whose environment names `${secret:canary}`; its row
//     says it needs a secret, "Add the secret" leads to the Connections form ready to type into,
//     which says secrets go to the encrypted file, and the source starts with the secret;
//   - Sources → Add source: a remote server that answers 401 (the OAuth test upstream with its
//     consent page): its row offers Sign in; no browser opens, so the address is copied to
//     "another device" (a second browser, which cannot reach this computer's loopback port at
//     the end) and the address that device ended on is pasted back;
//   - the client, started as Claude Code would start it from ~/.claude.json (command, args and
//     its paired key), runs code that calls all three sources; the destructive call pauses it, the
//     popup comes up, and one click on "Approve once" (once the popup takes input) lets the run
//     finish with every result; the warm popup the app keeps after it goes, with its web process,
//     once the app is quiet (CAPA_WARM_POPUP_SECS=4 here; a minute unless set).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chromium } from 'playwright-core';

import {
  CHROMIUM,
  EVERYTHING_JS,
  NODE,
  NODE_MODULES,
  childrenOf,
  cleanup,
  freePort,
  makeSandbox,
  removeSandboxes,
  signInOnAnotherDevice,
  startOAuthServer,
  stopProcess,
  waitFor,
  writeCapabilities,
} from '../node/support.mjs';
import { skipOrFail } from '../node/require.mjs';
import { APP, DRIVER, SCREENSHOTS, desktopLock, endHubOf, execute, ownDisplay, skip as appSkip, start } from './app.mjs';
import { WebDriver } from './webdriver.mjs';

const CLAUDE_CLI = path.join(NODE_MODULES, '@anthropic-ai', 'claude-code', 'cli-wrapper.cjs');
const missing = [
  ...['/usr/bin/Xvfb', '/usr/bin/openbox', '/usr/bin/xprop', CHROMIUM].filter((f) => !existsSync(f)).map((f) => `no ${f} (scripts/setup --test installs it)`),
  !existsSync(CLAUDE_CLI) && 'no @anthropic-ai/claude-code in node_modules: run `npm ci`',
].filter(Boolean);
const skip = appSkip || skipOrFail(missing);

describe('a first session on a desktop with no tray, no keychain and no browser', { skip, timeout: 300000 }, () => {
  const canary = `wa"lk\\through-${randomBytes(8).toString('hex')}`;
  let unlock;
  let sandbox;
  let home;
  let screen;
  let driver;
  let wd;
  let oauth;
  let browser;
  let client;

  before(async () => {
    unlock = await desktopLock();
    sandbox = await makeSandbox('capa-walkthrough-');
    home = path.join(sandbox.root, 'home');
    await mkdir(home);
    // Claude Code is installed and has run once: its user file exists, with no MCP server yet.
    await writeFile(path.join(home, '.claude.json'), '{\n  "numStartups": 1\n}\n');
    Object.assign(sandbox.env, {
      HOME: home,
      // No Secret Service: a session bus that is not there.
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(sandbox.root, 'no-bus')}`,
      CAPA_NO_BROWSER: '1',
      CAPA_NO_DIALOG: '1',
    });
    for (const name of ['XDG_CONFIG_HOME', 'CLAUDE_CONFIG_DIR', 'BROWSER', 'CAPA_BROWSER']) delete sandbox.env[name];
    oauth = await startOAuthServer();
    screen = await ownDisplay(sandbox.env);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await wd?.deleteSession().catch(() => {});
    await driver?.stop();
    if (sandbox) await endHubOf(sandbox.dataDir);
    await screen?.stop();
    if (oauth) await stopProcess(oauth.proc);
    await cleanup();
    await removeSandboxes();
    await unlock?.();
  });

  const bodyText = () => wd.script('return document.body.innerText');
  /** Waits for `text` in the current window; on a miss, says what the window shows instead. */
  const waitText = (text, timeoutMs = 15000) =>
    waitFor(`“${text}” in the window`, async () => (await bodyText()).includes(text), { timeoutMs }).catch(async (e) => {
      const shown = await bodyText().catch(() => '(unreadable)');
      throw new Error(`${e.message}; it shows:\n${shown}`);
    });
  const find = (xpath) => waitFor(`the element ${xpath}`, () => wd.find(xpath).catch(() => null), { timeoutMs: 15000 });
  /** Acts on the element at `xpath`. The page may draw it again between finding it and acting
   * (the Sources page redraws as sources change state): the driver then answers "stale element
   * reference" and nothing happened, so it is found again. Any other failure is the test's. */
  const act = async (xpath, action) => {
    for (let tries = 1; ; tries++) {
      try {
        return await action(await find(xpath));
      } catch (e) {
        if (tries >= 20 || !/stale element reference/.test(String(e?.message ?? e))) throw e;
      }
    }
  };
  const click = (xpath) => act(xpath, (element) => wd.click(element));
  const type = (xpath, text) => act(xpath, (element) => wd.type(element, text));
  const go = async (label) => {
    await click(`//nav[@aria-label="Main"]//a[normalize-space()="${label}"]`);
    await find(`//main//h2[normalize-space()="${label}"]`);
  };
  const sourceState = async (id) => (await wd.invoke('state')).sources.find((s) => s.id === id)?.state;

  it('connects Claude Code, adds a source with a secret, signs in on another device and approves a call', async (t) => {
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    const port = await freePort();
    const driverPort = await freePort();
    // The warm popup kept after a popup goes after 4 quiet seconds here (a minute for a person).
    driver = start(DRIVER, [`--port=${driverPort}`], { ...screen.env, TAURI_WEBVIEW_AUTOMATION: 'true', CAPA_WARM_POPUP_SECS: '4' });
    wd = new WebDriver(`http://127.0.0.1:${driverPort}`);
    await waitFor('WebKitWebDriver', async () => (await fetch(`${wd.base}/status`)).ok);
    await wd.newSession(APP, ['--config', configFile, '--http', `127.0.0.1:${port}`]);
    const [settings] = await waitFor('the settings window', async () => {
      const handles = await wd.handles();
      return handles.length === 1 ? handles : null;
    }, { timeoutMs: 30000 });
    await wd.switchTo(settings);
    await waitText('Welcome to Capabilities', 30000);
    assert.equal((await wd.invoke('state')).trayHost, 'none');
    await waitText('This desktop shows no tray icons');

    // Claude Code, from the Clients page.
    await go('Clients');
    await click('//button[@aria-label="Connect Claude Code"]');
    await click('//div[@data-client="claude-code"]//button[normalize-space()="Apply"]');
    await find('//div[@data-client="claude-code"]//*[contains(@class,"notice") and contains(@class,"ok")]');
    const entry = JSON.parse(await readFile(path.join(home, '.claude.json'), 'utf8')).mcpServers.capa;
    assert.match(entry.env.CAPA_CLIENT_KEY, /^capa_client_[0-9a-f]{64}$/);
    const claudeEnv = { ...sandbox.env, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    const listed = spawnSync(NODE, [CLAUDE_CLI, 'mcp', 'list'], { env: claudeEnv, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
    assert.match(listed.stdout, /^capa: .* mcp - [✓✔] Connected$/m, `${listed.stdout}\n${listed.stderr}`);
    t.diagnostic('Claude Code connected');

    // A local server that needs a secret, then the secret through "Add the secret".
    await go('Sources');
    await type('//input[@name="id"]', 'everything');
    await type('//input[@name="command"]', NODE);
    await type('//textarea[@name="args"]', EVERYTHING_JS);
    await type('//textarea[@name="env"]', 'CANARY=${secret:canary}');
    await click('//button[normalize-space()="Add source"]');
    await click('//a[@aria-label="Add the secret of everything"]');
    await find('//legend[normalize-space()="Add the secret of everything"]');
    await waitText('No OS keychain answers on this computer');
    await type('//input[@name="secret"]', canary);
    await click('//button[normalize-space()="Save connection"]');
    await waitText('Saved everything/personal.');
    await waitFor('everything ready', async () => (await sourceState('everything')) === 'ready', { timeoutMs: 30000 });
    assert.equal(JSON.parse(readFileSync(path.join(sandbox.dataDir, 'hub.json'), 'utf8')).pid > 0, true);
    assert.ok(existsSync(path.join(sandbox.dataDir, 'secrets.vault')), 'the secret is not in the encrypted file');
    t.diagnostic('everything has its secret');

    // A remote server that asks for a sign-in; no browser here, so it happens on another device.
    await go('Sources');
    await click('//label[@for="kind-url"]');
    await type('//input[@name="id"]', 'notes');
    await type('//input[@name="url"]', oauth.mcpUrl);
    await click('//button[normalize-space()="Add source"]');
    await click('//button[@aria-label="Sign in to notes"]');
    await waitText('The browser could not be opened');
    const address = await wd.script('return document.querySelector("[data-sign-in=notes] .sign-in-address code")?.textContent ?? null');
    assert.ok(address?.startsWith(new URL('/authorize', oauth.mcpUrl).href), address);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    const endedOn = await signInOnAnotherDevice(browser, address);
    await click('//button[normalize-space()="Signed in on another device? Paste the address it ended on…"]');
    await type('//textarea[@name="address"]', endedOn);
    await click('//button[normalize-space()="Finish signing in"]');
    await waitText('Signed in to notes as personal.', 30000);
    await waitFor('notes ready', async () => (await sourceState('notes')) === 'ready', { timeoutMs: 30000 });
    await wd.script('window.scrollTo(0, 0)');
    await wd.screenshot(path.join(SCREENSHOTS, 'desktop-walkthrough-sources.png'));
    t.diagnostic('signed in to notes on another device');

    // The client as Claude Code starts it: the command, arguments and key from its file.
    client = new Client({ name: 'claude-code', version: '2.0.0' });
    await client.connect(new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { ...sandbox.env, ...entry.env },
      stderr: 'pipe',
    }));
    const before = new Set(await wd.handles());
    const paused = await execute(client, {
      code: [
        'const echoed = await everything.echo({ message: "hello" });',
        'const who = await notes.whoami({});',
        'await demo.write_note({ title: "walkthrough", text: "bye" });',
        'const deleted = await demo.delete_note({ title: "walkthrough" });',
        'return { echoed, who, deleted };',
      ].join('\n'),
    });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    const popup = await waitFor('the approval popup', async () =>
      (await wd.handles()).find((h) => !before.has(h)), { timeoutMs: 15000, intervalMs: 50 });
    await wd.switchTo(popup);
    await waitFor('the popup to take input', async () =>
      (await wd.script('return document.querySelector(".queue")?.dataset.armed ?? null')) === 'true', { timeoutMs: 10000, intervalMs: 50 });
    await wd.click(await wd.find('//button[@data-choice="approve_once"]')).catch(() => {});
    await wd.switchTo(settings);
    await waitFor('the popup to close', async () => !(await wd.handles()).includes(popup), { timeoutMs: 10000 });
    // After a popup the app keeps the next one warm (hidden, with a web process of its own),
    // and lets it go once the app has been quiet for a while.
    const appPid = JSON.parse(readFileSync(path.join(sandbox.dataDir, 'hub.json'), 'utf8')).pid;
    const webProcesses = () => childrenOf(appPid).filter((p) => p.args.includes('WebKitWebProcess')).length;
    await waitFor('the warm popup', async () => (await wd.handles()).length === 2, { timeoutMs: 10000, intervalMs: 100 });
    const warmProcesses = await waitFor('its web process', async () => (webProcesses() >= 2 ? webProcesses() : null), { timeoutMs: 10000 });
    await waitFor('the warm popup to go after the quiet seconds', async () => (await wd.handles()).length === 1, { timeoutMs: 20000 });
    await waitFor('its web process to end', async () => webProcesses() < warmProcesses, { timeoutMs: 10000 });
    const done = await execute(client, { resume: paused.runId });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const result = JSON.stringify(done.result);
    assert.match(result, /hello/);
    assert.match(result, /client/);
    assert.equal(done.result.deleted !== undefined, true, result);

    // The secret reached the server, and is nowhere on screen.
    const server = childrenOf(JSON.parse(readFileSync(path.join(sandbox.dataDir, 'hub.json'), 'utf8')).pid)
      .find((p) => p.args.includes('server-everything'));
    const environ = readFileSync(`/proc/${server.pid}/environ`, 'utf8').split('\0');
    assert.equal(environ.find((e) => e.startsWith('CANARY='))?.slice('CANARY='.length), canary);
    await go('Connections');
    assert.ok(!(await bodyText()).includes(canary.slice(-16)), 'the secret is on the Connections page');
  });
});
