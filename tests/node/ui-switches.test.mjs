// On/off switches in the settings UI, end to end in headless Chromium against a real hub serving
// server-everything: a tool turned off on the Tools page leaves a TS SDK client's `search` and its
// call is refused; the source turned off on the Sources page shows `off` (not an error) and its
// tools go; it stays off across a hub restart and an edit in the Sources form; "Turn off all write
// tools" leaves only the tools the server declares read-only; turning back on from the UI works,
// while the same loosening with only the hub's bearer token is held for a person's confirmation.
// The CLI's `capa sources disable|enable` and `capa tools disable|enable` do the same (at an
// interactive terminal, a person's "enable" starts the source).
// The Policies page shows the built-in defaults as rules. Screenshots: docs/screenshots/ui-tools-switches.png,
// ui-policies-defaults.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  signInWithCapaUi,
  fakeBrowser,
  CAPA_BIN,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  waitFor,
  waitForSourcesReady,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');

const skip = skipOrFail(uiMissing());

const TOOL = 'everything.get-sum';
const SUM_CODE = 'return await everything.get_sum({ a: 2, b: 3 });';

describe('on/off switches in the browser', { skip }, () => {
  let sandbox;
  let configFile;
  let hub;
  let client;
  let browser;
  let page;
  let opened;

  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `ui-${name}.png`), fullPage: true });
  /** Opens a page afresh (a reload when it is open already: a hash change alone reads nothing). */
  const go = async (hash) => {
    const target = `${hub.url}/app/${hash}`;
    if (page.url() === target) await page.reload();
    else await page.goto(target);
    await page.locator('main h2').first().waitFor();
  };
  /** Logs the page in with the link `capa ui` has the (fake) browser open. */
  const login = async () => {
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.locator('main h2').first().waitFor();
  };
  const search = async (query) => resultText(await client.callTool({ name: 'search', arguments: { query } }));
  const execute = async (code) => (await client.callTool({ name: 'execute', arguments: { code } })).structuredContent;
  const source = async (id) => (await hub.apiJson('/api/sources')).find((s) => s.id === id);
  const everythingTools = async () => (await hub.apiJson('/api/tools')).filter((t) => t.source === 'everything');
  const toolSwitch = (address) => page.getByRole('switch', { name: `Tool ${address}`, exact: true });
  const sourceSwitch = (id) => page.getByRole('switch', { name: `Source ${id}`, exact: true });
  const bearerPut = async (p, body) => {
    const res = await hub.api(p, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text);
  };

  before(async () => {
    sandbox = await makeSandbox('capa-ui-switches-');
    opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [everythingStdio()],
      options: { demo: true, toolExposure: 'code' },
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'e2e-switches' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('dialog', (dialog) => dialog.accept());
    await mkdir(SHOTS, { recursive: true });
    await login();
  });

  after(async () => {
    await browser?.close();
    await closeClient(client);
    await cleanup();
    await removeSandboxes();
  });

  it('turns one tool off: search hides it and a call is refused; on again from the UI', async () => {
    assert.match(await search('sum of two numbers'), /everything\.get_sum\(/);
    await go('#/tools');
    const toggle = toolSwitch(TOOL);
    await toggle.waitFor();
    assert.equal(await toggle.isChecked(), true);
    assert.equal(await toggle.evaluate((el) => el.tagName + ':' + el.type), 'INPUT:checkbox');
    await toggle.click();
    await page.getByText(`${TOOL} is off.`).waitFor();
    assert.equal(await toolSwitch(TOOL).isChecked(), false);

    const text = await search('sum of two numbers');
    assert.doesNotMatch(text, /everything\.get_sum\(/, text);
    assert.match(text, /hidden by your policy/, text);
    const refused = await execute(SUM_CODE);
    assert.notEqual(refused.status, 'completed', JSON.stringify(refused));
    assert.doesNotMatch(JSON.stringify(refused), /"5"|: 5\b|is 5/, JSON.stringify(refused));

    await toolSwitch(TOOL).click();
    await page.getByText(`${TOOL} is on.`).waitFor();
    assert.match(await search('sum of two numbers'), /everything\.get_sum\(/);
    const ran = await execute(SUM_CODE);
    assert.equal(ran.status, 'completed', JSON.stringify(ran));
  });

  it('turns off all write tools of a source: only read-only tools stay on', async () => {
    await go('#/tools');
    await page.getByRole('button', { name: 'Turn off all write tools of everything' }).click();
    await page.getByText(/Turned off \d+ tools? of everything not declared read-only\./).waitFor();
    const tools = await everythingTools();
    assert.ok(tools.length > 5, JSON.stringify(tools.map((t) => t.address)));
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint === true);
    assert.ok(readOnly.length > 0 && readOnly.length < tools.length, 'server-everything has both kinds');
    for (const tool of tools) {
      assert.equal(tool.policy === 'deny', tool.annotations?.readOnlyHint !== true, `${tool.address}: ${tool.policy}`);
      assert.equal(await toolSwitch(tool.address).isChecked(), tool.policy !== 'deny', tool.address);
    }
    // A person's "off" cannot be undone with the bearer token alone: held, the tool stays off.
    const write = tools.find((t) => t.annotations?.readOnlyHint !== true).address;
    const answer = await bearerPut('/api/tools/enabled', { addresses: [write], enabled: true });
    assert.deepEqual([answer.tools[0].enabled, answer.tools[0].held], [false, true], JSON.stringify(answer));
    assert.equal((await everythingTools()).find((t) => t.address === write).policy, 'deny');
    await go('#/tools');
    await page.locator(`tr[data-tool="${write}"]`).getByText('Off, waits for you').waitFor();
    await shot('tools-switches');
    // The person turns it on: now it is on.
    await toolSwitch(write).click();
    await page.getByText(`${write} is on.`).waitFor();
    assert.notEqual((await everythingTools()).find((t) => t.address === write).policy, 'deny');
  });

  it('turns the source off: its tools go and it shows off, not an error', async () => {
    await go('#/sources');
    const row = page.locator('tr[data-source="everything"]');
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
    await sourceSwitch('everything').click();
    await page.getByText('everything is off').waitFor();
    await row.locator('.badge', { hasText: 'off' }).waitFor();
    assert.equal(await sourceSwitch('everything').isChecked(), false);
    assert.equal((await row.locator('td.error-text').textContent()).trim(), '');
    const listed = await source('everything');
    assert.equal(listed.state, 'off');
    assert.equal(listed.last_error, null);
    assert.equal((await everythingTools()).length, 0);
    assert.doesNotMatch(await search('sum of two numbers'), /everything\.get_sum\(/);
    assert.match(await readFile(configFile, 'utf8'), /disabled: true/);
  });

  it('stays off across a hub restart and an edit in the Sources form', async () => {
    await closeClient(client);
    await hub.stop();
    hub = await startHub({ configFile, sandbox, waitReady: false });
    await waitForSourcesReady(hub, ['demo']);
    client = await connectHttp(hub, { name: 'e2e-switches' });
    assert.equal((await source('everything')).state, 'off');
    await login();
    await go('#/sources');
    const row = page.locator('tr[data-source="everything"]');
    await row.locator('.badge', { hasText: 'off' }).waitFor();
    await row.getByRole('button', { name: 'Edit everything' }).click();
    await page.getByLabel('Description').fill('edited while off');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved everything/).waitFor();
    await row.getByText('edited while off').waitFor();
    await row.locator('.badge', { hasText: 'off' }).waitFor();
    const text = await readFile(configFile, 'utf8');
    assert.match(text, /disabled: true/, text);
    assert.match(text, /edited while off/, text);
    assert.equal((await source('everything')).state, 'off');
    assert.equal((await everythingTools()).length, 0);
  });

  it('turns the source on from the UI; the token alone is held for a person', async () => {
    await go('#/sources');
    await sourceSwitch('everything').click();
    await page.getByText('everything is on').waitFor();
    const row = page.locator('tr[data-source="everything"]');
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
    await waitFor('everything tools back', async () => (await everythingTools()).length > 5);

    // Off again in the UI, then on with only the bearer token: the file says on, nothing starts.
    await sourceSwitch('everything').click();
    await row.locator('.badge', { hasText: 'off' }).waitFor();
    const answer = await bearerPut('/api/sources/everything/enabled', { enabled: true });
    assert.equal(answer.state, 'held', JSON.stringify(answer));
    assert.doesNotMatch(await readFile(configFile, 'utf8'), /disabled: true/);
    const held = await source('everything');
    assert.equal(held.state, 'needs_confirmation', JSON.stringify(held));
    assert.match(held.last_error, /turned off/, held.last_error);
    assert.equal((await everythingTools()).length, 0);
    // The person confirms it in the app: it starts.
    await go('#/sources');
    await row.getByRole('button', { name: 'Confirm everything' }).click();
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
  });

  it('switches from the CLI: `capa sources disable|enable`, `capa tools disable|enable`', async () => {
    const capa = (args, opts = {}) => runCapa(['--config', configFile, ...args], { env: sandbox.env, ...opts });
    let ran = await capa(['tools', 'disable', 'everything.echo']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((await everythingTools()).find((t) => t.address === 'everything.echo').policy, 'deny');
    ran = await capa(['tools', 'enable', 'everything.echo']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((await everythingTools()).find((t) => t.address === 'everything.echo').policy, 'allow');

    ran = await capa(['sources', 'disable', 'everything']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((await source('everything')).state, 'off');
    // Without a terminal (an agent's shell) turning it on waits for a person...
    ran = await capa(['sources', 'enable', 'everything']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /needs a person/, ran.stdout);
    assert.equal((await source('everything')).state, 'needs_confirmation');
    // ...and at an interactive terminal the person's `enable` starts it.
    ran = await capa(['sources', 'enable', 'everything'], { terminal: true });
    assert.equal(ran.code, 0, ran.stdout);
    await waitFor('everything ready', async () => (await source('everything')).state === 'ready', { timeoutMs: 30000 });
  });

  it('shows the built-in defaults as rules on the Policies page', async () => {
    await go('#/policies');
    const builtIn = page.locator('tr.built-in');
    // The heading paints before the rules arrive: wait for both rows, then count.
    await builtIn.filter({ hasText: 'destructive' }).locator('.badge.ask').waitFor();
    await builtIn.filter({ hasText: 'Every other tool' }).locator('.badge.allow').waitFor();
    assert.equal(await builtIn.count(), 2);
    const main = await page.locator('main').textContent();
    assert.doesNotMatch(main, /docs\/|crates\//, 'no pointers to repository files');
    assert.doesNotMatch(main, /\bReset\b/);
    // The bulk switch's rules are there, marked as tool switches, each removable.
    const rule = page.locator('tr[data-rule^="everything."]').first();
    await rule.getByText('Tool turned off').waitFor();
    await rule.getByRole('button', { name: /^Remove rule everything\..* \(back to default\)$/ }).waitFor();
    await shot('policies-defaults');
  });
});
