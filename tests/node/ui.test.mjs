// The settings UI (ui/, served by the hub at /app/), end to end in headless Chromium: `capa ui` opens
// a one-time login link (captured through CAPA_BROWSER); the Welcome page shows the client snippets;
// `server-everything` is added on the Sources page and its tools appear; `everything.get-sum` is set
// to ask on the Tools page; a TS SDK 1.x client without elicitation runs `execute` that calls it and
// gets `awaiting_approval`; the Pending page shows the call and "Approve once" lets the resumed run
// complete with the sum. A second run is denied with the keyboard (key 4) in the approval view
// `#/approve/<runId>`. Screenshots of each page go to docs/screenshots/ui-<page>.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  fakeBrowser,
  forwardedLink,
  CAPA_BIN,
  EVERYTHING_JS,
  NODE,
  REPO_ROOT,
  makeSandbox,
  MODEL_DIR,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  waitFor,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');

const skip = skipOrFail(uiMissing());

const SUM_CODE = 'return await everything.get_sum({ a: 2, b: 3 });';
const CANARY = 'canary-7d41e0c2-write-only';

// The connection subtest needs the OS keychain (gnome-keyring over D-Bus: tests/support/with-keyring.sh).
const keychainSkip = skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return result.structuredContent;
}

describe('settings UI in the browser', { skip }, () => {
  let sandbox;
  let configFile;
  let hub;
  let client;
  let browser;
  let page;
  let opened; // what the fake browser was given (fakeBrowser in support.mjs)

  const openedLines = () => opened.opened();
  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `ui-${name}.png`), fullPage: true });
  const go = async (hash) => {
    await page.goto(`${hub.url}/app/${hash}`);
    await page.locator('main h2').first().waitFor();
  };

  before(async () => {
    sandbox = await makeSandbox('capa-ui-');
    opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    // Search by meaning, as a person's hub has it (the Tools page shows its state).
    if (existsSync(path.join(MODEL_DIR, 'model.safetensors'))) sandbox.env.CAPA_MODEL_DIR = MODEL_DIR;
    delete sandbox.env.CAPA_NO_BROWSER;
    configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    hub = await startHub({ configFile, sandbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    page.on('dialog', (dialog) => dialog.accept());
    await mkdir(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await closeClient(client);
    await cleanup();
    await removeSandboxes();
  });

  it('logs in with the link `capa ui` opens and shows the welcome page', async () => {
    const before = (await openedLines()).length;
    const ran = await runCapa(['--config', configFile, 'ui'], { env: sandbox.env });
    assert.equal(ran.code, 0, `capa ui: ${ran.stderr}`);
    const argument = await waitFor('capa ui to open the browser', async () => (await openedLines())[before]);
    // A private page that forwards to the login link; its secret is in no process's argv.
    const link = await forwardedLink(argument);
    assert.ok(link.startsWith(`${hub.url}/app/login/`), link);
    const secret = link.split('/').pop();
    assert.ok(!(await opened.cmdlines()).some((line) => line.includes(secret)), 'login secret in argv');

    await page.goto(argument);
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
    assert.match(page.url(), new RegExp(`^${hub.url}/app/`));
    // The key left the address bar for this origin's storage; the cookie alone opens nothing.
    assert.doesNotMatch(page.url(), /session=/);
    const session = await page.evaluate(async () => {
      const key = localStorage.getItem('capa.session');
      const withKey = await fetch('/api/session', { headers: { 'X-Capa-Csrf': key } });
      const cookieOnly = await fetch('/api/session');
      return { key, body: await withKey.json(), cookieOnly: cookieOnly.status };
    });
    assert.equal(session.body.csrf, session.key, JSON.stringify(session));
    assert.equal(session.cookieOnly, 403, JSON.stringify(session));

    // Snippets name the capa program by its absolute path (ui-clients.test.mjs checks them all).
    const capa = realpathSync(CAPA_BIN);
    for (const text of [`claude mcp add --scope user capa -- ${capa} mcp`, '[mcp_servers.capa]', `${hub.url}/mcp`]) {
      await page.getByText(text).first().waitFor();
    }
    const cursor = await page.locator('pre[data-client="Cursor"]').textContent();
    assert.deepEqual(JSON.parse(cursor), { mcpServers: { capa: { command: capa, args: ['mcp'] } } });
    await page.getByText('The demo source is there').waitFor();
    await shot('welcome');
  });

  it('adds server-everything on the Sources page and lists its tools', async () => {
    await go('#/sources');
    await page.getByLabel('Id').fill('everything');
    await page.getByLabel('Description').fill('The MCP reference server');
    await page.getByRole('textbox', { name: 'Command', exact: true }).fill(NODE);
    await page.getByLabel('Arguments').fill(`${EVERYTHING_JS}\nstdio`);
    await page.getByRole('button', { name: 'Add source' }).click();
    // Said once the source started (lib/settle.ts), with its tool count.
    await page.getByText(/^Added everything: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });
    const row = page.locator('tr[data-source="everything"]');
    // No reload: the page follows the hub's events (/api/events) from `starting` to `ready`.
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
    const tools = Number(await row.locator('td.num').textContent());
    assert.ok(tools > 5, `everything has tools: ${tools}`);

    // Edit: the form starts from the source's definition; saving restarts it.
    await row.getByRole('button', { name: 'Edit everything' }).click();
    assert.equal(await page.getByRole('textbox', { name: 'Command', exact: true }).inputValue(), NODE);
    assert.equal(await page.getByLabel('Arguments').inputValue(), `${EVERYTHING_JS}\nstdio`);
    await page.getByLabel('Description').fill('The MCP reference server, edited');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved everything: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });
    await row.getByText('The MCP reference server, edited').waitFor();
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
    assert.equal(await page.locator('tr[data-source="demo"]').getByRole('button', { name: 'Edit demo' }).count(), 0, 'the demo is built in');
    await shot('sources');
  });

  it('sets everything.get-sum to ask on the Tools page and finds it with search', async () => {
    await go('#/tools');
    const select = page.getByLabel('Policy for everything.get-sum');
    await select.waitFor();
    await select.selectOption('ask');
    await page.getByText('everything.get-sum → ask').waitFor();
    await page.locator('tr[data-tool="everything.get-sum"]').getByText('[asks]').waitFor();
    const policy = await hub.apiJson('/api/policy');
    assert.ok(
      policy.rules.some((r) => r.pattern === 'everything.get-sum' && r.decision === 'ask'),
      JSON.stringify(policy),
    );

    // The search filters the tables to what it matches (issue 41: it printed the model's text).
    const rowsBefore = await page.locator('tr[data-tool]:visible').count();
    await page.getByLabel('Search tools').fill('sum of two numbers');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.filter-line', { hasText: /tools? match “sum of two numbers”/ }).waitFor();
    const shown = await page.locator('tr[data-tool]:visible').evaluateAll((rows) => rows.map((r) => r.dataset.tool));
    assert.ok(shown.includes('everything.get-sum'), shown.join(', '));
    assert.ok(shown.length < rowsBefore, `${shown.length} of ${rowsBefore} rows shown`);
    assert.equal(await page.locator('pre.search-results').count(), 0, 'no text dump');
    await shot('tools-search');
    await page.getByRole('button', { name: 'Show every tool' }).click();
    assert.equal(await page.locator('tr[data-tool]:visible').count(), rowsBefore);
    // How search ranks, under the search box: terms only without the model (CAPA_MODEL_DIR unset),
    // else by meaning once the page, polling while the hub embeds, sees every tool embedded.
    const { search: ranking } = await hub.apiJson('/api/config');
    assert.ok(ranking && ranking.state !== 'failed', JSON.stringify(ranking));
    const searchLine = page.locator('.search-status');
    if (ranking.state === 'off') {
      await searchLine.getByText(`Search: terms only — ${ranking.reason}.`, { exact: false }).waitFor();
    } else {
      await searchLine.getByText(/^Search: by meaning and terms \(\d+ tools\)$/).waitFor({ timeout: 60000 });
    }
    await shot('tools');

    await go('#/policies');
    await page.locator('main').getByText('everything.get-sum', { exact: true }).waitFor();
    await shot('policies');
    await go('#/connections');
    assert.equal(await page.getByLabel('Secret').getAttribute('type'), 'password');
    await shot('connections');
  });

  it('shows the pending call, approves it once, and the client gets the sum', async () => {
    await go('#/pending');
    await page.getByText('Nothing is waiting for you.').waitFor();
    client = await connectHttp(hub, { name: 'e2e-ui' }); // no elicitation capability
    const paused = await execute(client, { code: SUM_CODE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    const runId = paused.runId;

    // The open page shows the call without a reload (live update), with the count in the menu.
    const card = page.locator('article.approval');
    await card.getByRole('heading', { name: 'everything.get-sum' }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator('nav .count').textContent(), '1');
    const preview = JSON.parse(await card.locator('pre.preview').textContent());
    assert.deepEqual(preview, { a: 2, b: 3 });
    for (const title of ['Approve once', 'Approve for the rest of this run', 'Always allow everything.get-sum', 'Deny']) {
      assert.equal(await card.getByRole('button', { name: title, exact: true }).count(), 1, title);
    }
    await shot('pending');
    await card.getByRole('button', { name: 'Approve once', exact: true }).click();
    await page.getByText('Approved once.').waitFor();
    await page.getByText('Nothing is waiting for you.').waitFor();

    const done = await execute(client, { resume: runId });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /\b5\b/);

    await go('#/runs');
    await page.locator(`a[href="#/runs/${runId}"]`).waitFor();
    await shot('runs');
    await go(`#/runs/${runId}`);
    await page.getByText(SUM_CODE).waitFor();
    // The result is a tree with a Copy button, not raw JSON.
    const tree = page.getByLabel('Result', { exact: true });
    await tree.getByRole('button', { name: 'Copy' }).waitFor();
    assert.ok(await tree.locator('.tree-leaf, details').count() > 0, 'the result renders as a tree');
    await shot('run');
  });

  it('denies with key 4 in the approval view of one run', async () => {
    const paused = await execute(client, { code: SUM_CODE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    await go(`#/approve/${paused.runId}`);
    await page.locator('article.approval').getByRole('heading', { name: 'everything.get-sum' }).waitFor();
    assert.equal(await page.locator('header').isVisible(), false, 'the popup view has no navigation');
    await shot('approve');
    await page.keyboard.press('4');
    await page.getByText('Decided. You can close this window.').waitFor();
    assert.deepEqual((await hub.apiJson('/api/approvals')).pending, []);
    const after = await execute(client, { resume: paused.runId });
    assert.notEqual(after.status, 'awaiting_approval', JSON.stringify(after));
    assert.match(JSON.stringify(after), /denied/);

    // The history says denied (the model saw `failed`), with the error in words.
    await go(`#/runs/${paused.runId}`);
    await page.locator('.badge.run-denied', { hasText: 'denied' }).waitFor();
    await page.getByText('A call of this run was denied, so the run ended there.').waitFor();
    await page.locator('.notice.error code', { hasText: 'denied' }).waitFor();
    await shot('run-denied');
  });

  it('saves a connection on the Connections page; the secret is write-only and the source uses it', { skip: keychainSkip }, async () => {
    // A source whose env refers to a secret waits for a connection.
    await go('#/sources');
    await page.getByLabel('Id').fill('keyed');
    await page.getByRole('textbox', { name: 'Command', exact: true }).fill(NODE);
    await page.getByLabel('Arguments').fill(`${EVERYTHING_JS}\nstdio`);
    await page.getByLabel('Environment').fill('API_KEY=${secret:API_KEY}');
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByText('Added keyed; it needs a secret before it can start: add it with “Add the secret” below.').waitFor({ timeout: 30000 });
    const row = page.locator('tr[data-source="keyed"]');
    // In words, with the way to the form (issue 41: the raw `needs_connection` and a CLI command).
    await row.locator('.badge[data-state="needs_connection"]', { hasText: 'needs a secret' }).waitFor({ timeout: 30000 });
    assert.ok(!(await row.textContent()).includes('capa connections'), await row.textContent());
    await shot('sources-needs-secret');
    await row.getByRole('link', { name: 'Add the secret of keyed' }).click();

    // The form comes filled in for that source's secret, with the secret field to type into.
    await page.getByText('Add the secret of keyed').waitFor();
    assert.equal(await page.getByLabel('Source', { exact: true }).inputValue(), 'keyed');
    assert.equal(await page.getByLabel('Field', { exact: true }).inputValue(), 'API_KEY');
    await page.getByLabel('Name', { exact: true }).fill('work');
    const secret = page.getByLabel('Secret', { exact: true });
    assert.equal(await secret.getAttribute('type'), 'password');
    await secret.fill(CANARY);
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByText('Saved keyed/work.').waitFor();
    assert.equal(await secret.inputValue(), '', 'the secret field is cleared after saving');
    await page.getByRole('cell', { name: 'API_KEY' }).waitFor();
    await page.getByRole('button', { name: 'Edit keyed/work' }).click();
    assert.equal(await secret.inputValue(), '', 'editing never shows the secret back');
    await shot('connections');
    assert.ok(!(await page.content()).includes(CANARY), 'the secret is not on the page');
    const listed = await page.evaluate(async () => (await fetch('/api/connections')).text());
    assert.ok(!listed.includes(CANARY), listed);

    // The hub read it back from the keychain: the source starts, and its server sees the variable.
    await go('#/sources');
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
    const env = await hub.apiJson('/api/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address: 'keyed.get-env', arguments: {} }),
    });
    const text = JSON.stringify(env);
    assert.match(text, /API_KEY/, text.slice(0, 500));
    assert.ok(!text.includes(CANARY), 'the value reaches the upstream but comes back redacted');
  });
  it('holds a change made with the token that loosens the policy until it is confirmed on the Policies page', async () => {
    // everything.get-sum asks (set on the Tools page above); the bearer token (any local
    // process that reads the token file) sets it to allow: written, but held back.
    const put = await hub.apiJson('/api/policy/rule', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ pattern: 'everything.get-sum', decision: 'allow' }),
    });
    assert.deepEqual(
      put.held.map((c) => [c.target, c.from, c.to]),
      [['everything.get-sum', 'ask', 'allow']],
      JSON.stringify(put),
    );
    await go('#/policies');
    const held = page.getByRole('region', { name: 'Changes waiting for you' });
    await held.getByText('everything.get-sum: ask → allow').waitFor();
    await shot('policies-held');
    await held.getByRole('button', { name: 'Confirm these changes' }).click();
    await page.getByText('Confirmed: the policy file is in force.').waitFor();
    await held.waitFor({ state: 'detached' });
    const after = await hub.apiJson('/api/policy');
    assert.deepEqual(after.held, [], JSON.stringify(after));
  });
  it('starts a source added with the token only once it is confirmed on the Sources page', async () => {
    const added = await hub.apiJson('/api/sources', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'planted', command: NODE, args: [EVERYTHING_JS, 'stdio'] }),
    });
    assert.equal(added.ok, true, JSON.stringify(added));
    await go('#/sources');
    const row = page.locator('tr[data-source="planted"]');
    await row.locator('.badge[data-state="needs_confirmation"]', { hasText: 'needs your confirmation' }).waitFor({ timeout: 15000 });
    await shot('sources-confirm');
    await row.getByRole('button', { name: 'Confirm planted' }).click();
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30000 });
  });
});
