// One source's page (`#/sources/<id>`, ui/src/pages/source.ts) in headless Chromium against the
// real hub: server-everything's tester runs `get-sum` from the form made from its schema and shows
// 5 with the time; raw JSON that does not parse is refused before anything is sent; a tool set to
// ask waits for a decision (pending, not run) and runs once approved in the tester's own card; a
// denied tool is refused. A failing source (a script here that prints a canary secret from its
// connection to stderr and exits 1) shows that line in its log, the secret redacted; a chatty one
// keeps the log's DOM bounded. Its Sampling switch allows and takes back the source's sampling.
// Screenshot: docs/screenshots/ui-source.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
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
  removeSandboxes,
  writeCapabilities,
  startHub,
  cleanup,
  runCapa,
  waitFor,
  waitForSourcesReady,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
// Quotes and backslashes: the forms a secret takes in JSON must be caught too.
const CANARY = `canary-"q'\\b-5e1f0d`;
const MAX_DOM_LINES = 500;

const skip = skipOrFail(uiMissing());
// The canary is a connection secret, kept in the OS keychain (tests/support/with-keyring.sh).
const keychainSkip = skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);

describe('a source page: live log and tool tester', { skip }, () => {
  let sandbox;
  let configFile;
  let hub;
  let browser;
  let page;
  let connectionSet = false;
  const capa = (...args) => ['--config', configFile, ...args];

  const go = async (hash) => {
    await page.goto(`${hub.url}/app/${hash}`);
    // The same address again is no navigation: load the page afresh.
    await page.reload();
    await page.locator('main h2').first().waitFor();
  };
  const tester = () => page.getByRole('region', { name: 'Test a tool' });
  const pickTool = async (name) => {
    await tester().getByLabel('Tool', { exact: true }).selectOption({ label: name });
  };
  const api = (p, body, method = 'PUT') =>
    hub.apiJson(p, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  before(async () => {
    sandbox = await makeSandbox('capa-ui-source-');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const failing = path.join(sandbox.root, 'failing.mjs');
    await writeFile(failing, "process.stderr.write(`cannot start: token ${process.env.CANARY} refused\\n`);\nprocess.exit(1);\n");
    const chatty = path.join(sandbox.root, 'chatty.mjs');
    await writeFile(chatty, "for (let i = 0; i < 1500; i++) console.error(`chatty line ${i} ${'x'.repeat(60)}`);\nprocess.exit(1);\n");
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: false },
      servers: [
        { id: 'everything', command: NODE, args: [EVERYTHING_JS, 'stdio'] },
        { id: 'failing', command: NODE, args: [failing], env: { CANARY: '${secret:canary}' } },
        { id: 'chatty', command: NODE, args: [chatty] },
      ],
    });
    if (!keychainSkip) {
      const set = await runCapa(capa('connections', 'set', 'failing', 'personal'), { env: sandbox.env, input: CANARY });
      assert.equal(set.code, 0, `capa connections set: ${set.stderr}`);
      connectionSet = true;
    }
    hub = await startHub({ configFile, sandbox, waitReady: false });
    await waitForSourcesReady(hub, ['everything'], 30000);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
    const before = (await opened.opened()).length;
    const ran = await runCapa(capa('ui'), { env: sandbox.env });
    assert.equal(ran.code, 0, `capa ui: ${ran.stderr}`);
    const argument = await waitFor('capa ui to open the browser', async () => (await opened.opened())[before]);
    await forwardedLink(argument);
    await page.goto(argument);
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    if (connectionSet) await runCapa(capa('connections', 'remove', 'failing', 'personal'), { env: sandbox.env });
    await cleanup();
    await removeSandboxes();
  });

  it('opens from the Sources page and runs get-sum from the form made from its schema', async () => {
    await go('#/sources');
    await page.locator('tr[data-source="everything"]').getByRole('link', { name: 'everything' }).click();
    await page.waitForURL(/#\/sources\/everything$/);
    await page.getByRole('heading', { name: 'Source everything' }).waitFor();
    await page.locator('.source-status .badge', { hasText: 'ready' }).waitFor();
    // The hub's own lines about the source are in its log.
    await page.getByRole('log', { name: 'Log of everything' }).getByText(/ready: \d+ tools/).waitFor();

    await pickTool('get-sum');
    const a = tester().getByLabel('a *', { exact: true });
    await a.waitFor();
    assert.equal(await a.getAttribute('type'), 'number');
    assert.equal(await a.getAttribute('aria-required'), 'true');
    await tester().getByText('First number').waitFor();
    await a.fill('2');
    await tester().getByLabel('b *', { exact: true }).fill('3');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/^Done in \d+ ms\.$/).waitFor();
    const text = await tester().locator('.tester-output pre').first().textContent();
    assert.match(text, /\b5\b/, text);
    const ms = Number(await tester().locator('.tester-timing').getAttribute('data-ms'));
    assert.ok(Number.isFinite(ms) && ms >= 0, `timing: ${ms}`);
    await page.screenshot({ path: path.join(SHOTS, 'ui-source.png'), fullPage: true });

    // A missing required field is named, and nothing is sent.
    await tester().getByLabel('b *', { exact: true }).fill('');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText('b is required.').waitFor();
  });

  it('lets the person allow the source to ask the client\'s model with its Sampling switch, and take it back (issue 39)', async () => {
    const allowed = async () => (await hub.apiJson('/api/sources')).find((x) => x.id === 'everything').sampling_allowed;
    const sampling = page.getByRole('switch', { name: 'Sampling from everything' });
    await sampling.waitFor();
    assert.equal(await sampling.isChecked(), false, 'off until the person turns it on');
    assert.equal(await allowed(), false);
    await sampling.check();
    await page.getByText("everything may now ask your client's model; each request is labelled with it.").waitFor();
    assert.equal(await allowed(), true);
    await sampling.uncheck();
    await page.getByText("everything may no longer ask your client's model.").waitFor();
    assert.equal(await allowed(), false);
  });

  it('refuses raw JSON that does not parse without sending it, and sends JSON that does', async () => {
    const sent = [];
    const watch = (request) => {
      if (request.url().endsWith('/api/call')) sent.push(request.postData());
    };
    page.on('request', watch);
    await tester().getByLabel('Edit the arguments as raw JSON').check();
    const raw = tester().getByLabel('Arguments (JSON)', { exact: true });
    assert.deepEqual(JSON.parse(await raw.inputValue()), { a: 2 }, 'the form\'s values carried over');
    await raw.fill('{"a": 2, "b": ');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/^Not valid JSON: .*Nothing was sent\.$/).waitFor();
    await raw.fill('[1, 2]');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/must be a JSON object/).waitFor();
    assert.deepEqual(sent, [], 'nothing reached /api/call');
    await raw.fill('{"a": 40, "b": 2}');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/^Done in \d+ ms\.$/).waitFor();
    assert.match(await tester().locator('.tester-output pre').first().textContent(), /\b42\b/);
    page.off('request', watch);
    assert.equal(sent.length, 1);
    await tester().getByLabel('Edit the arguments as raw JSON').uncheck();
  });

  it('shows images by type and size', async () => {
    await pickTool('get-tiny-image');
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/^Image: image\/png, [\d.]+ (bytes|KB)$/).waitFor();
  });

  it('sends a tool that asks to the approval flow instead of running it, and runs it once approved', async () => {
    await api('/api/policy/rule', { pattern: 'everything.echo', decision: 'ask' });
    // The page follows the policy change on its next refresh (a live event or a reload).
    await go('#/sources/everything');
    await pickTool('echo');
    await tester().getByText('policy: ask').waitFor();
    await tester().getByLabel('message *', { exact: true }).fill('hello from the tester');
    await tester().getByRole('button', { name: 'Run' }).click();
    const card = tester().locator('article.approval');
    await card.getByRole('heading', { name: 'everything.echo' }).waitFor();
    await tester().getByText(/^Waiting for a decision/).waitFor();
    const pending = (await hub.apiJson('/api/approvals')).pending;
    assert.equal(pending.length, 1, JSON.stringify(pending));
    assert.equal(pending[0].address, 'everything.echo');
    assert.deepEqual(pending[0].preview, { message: 'hello from the tester' });
    assert.equal(await tester().locator('.tester-output pre.result-text').count(), 0, 'nothing ran');
    await page.screenshot({ path: path.join(SHOTS, 'ui-source-approval.png'), fullPage: true });

    await card.getByRole('button', { name: 'Approve once', exact: true }).click();
    await tester().getByText(/^Done in \d+ ms\.$/).waitFor({ timeout: 30000 });
    assert.match(await tester().locator('.tester-output pre').first().textContent(), /hello from the tester/);
    assert.deepEqual((await hub.apiJson('/api/approvals')).pending, []);
  });

  it('refuses a denied tool', async () => {
    await api('/api/policy/rule', { pattern: 'everything.get-env', decision: 'deny' });
    await go('#/sources/everything');
    await pickTool('get-env');
    await tester().getByText('policy: deny').waitFor();
    await tester().getByRole('button', { name: 'Run' }).click();
    await tester().getByText(/^denied: /).waitFor();
  });

  it('shows a failing source\'s stderr in its log, the secret redacted', { skip: keychainSkip }, async () => {
    await go('#/sources/failing');
    const log = page.getByRole('log', { name: 'Log of failing' });
    const line = log.locator('.log-stderr', { hasText: 'cannot start: token' }).first();
    await line.waitFor({ timeout: 20000 });
    assert.equal((await line.textContent()).match(/token (.*) refused/)?.[1], '[redacted]');
    await log.locator('.log-hub.log-error').first().waitFor();
    await page.locator('.source-status .badge', { hasText: 'down' }).waitFor();
    const html = await page.content();
    const forms = [CANARY, JSON.stringify(CANARY).slice(1, -1), 'q\'\\b-5e1f0d', '5e1f0d'];
    for (const form of forms) assert.ok(!html.includes(form), `the page holds ${form}`);
    const answer = await (await hub.api('/api/sources/failing/logs')).text();
    for (const form of forms) assert.ok(!answer.includes(form), `the API holds ${form}`);
    const body = JSON.parse(answer);
    assert.ok(body.lines.some((l) => l.stream === 'stderr' && l.text === 'cannot start: token [redacted] refused'), answer.slice(0, 2000));
    assert.ok(body.next >= body.lines.at(-1).seq);
    const later = await hub.apiJson(`/api/sources/failing/logs?after=${body.next}`);
    assert.ok(later.lines.every((l) => l.seq > body.next));
    await page.screenshot({ path: path.join(SHOTS, 'ui-source-failing.png'), fullPage: true });
  });

  it('keeps the log bounded in the hub and in the page with a chatty child, and follows unless scrolled up', async () => {
    const body = await waitFor('the chatty child to overflow the ring', async () => {
      const b = await hub.apiJson('/api/sources/chatty/logs');
      return b.dropped > 0 ? b : null;
    });
    assert.ok(body.lines.length <= 500, `${body.lines.length} lines kept`);
    assert.ok(body.lines.reduce((n, l) => n + Buffer.byteLength(l.text), 0) <= 256 * 1024);
    assert.equal(body.lines.at(-1).seq, body.next);
    assert.equal(body.lines[0].seq, body.dropped + 1, 'the oldest went first');

    await go('#/sources/chatty');
    const log = page.getByRole('log', { name: 'Log of chatty' });
    await log.locator('.log-line').first().waitFor();
    const count = await log.locator('.log-line').count();
    assert.ok(count > 0 && count <= MAX_DOM_LINES, `${count} lines in the page`);
    await page.getByText(/older lines? not shown/).waitFor();
    // It follows new lines: scrolled to the bottom.
    const atBottom = () => log.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 8);
    await waitFor('the log to follow', atBottom, { timeoutMs: 5000 });
    // The child restarts (with backoff) and writes more; scrolled up, the view stays put.
    await log.evaluate((el) => (el.scrollTop = 0));
    const last = async () => Number(await log.locator('.log-line').last().getAttribute('data-seq'));
    const seen = await last();
    // The restarts back off up to 30 s (capa-upstream's max_backoff): on a loaded machine the
    // earlier cases take long enough that the next restart is that far away.
    await waitFor('more lines from the restarted child', async () => (await last()) > seen, { timeoutMs: 45000 });
    assert.equal(await log.evaluate((el) => el.scrollTop), 0, 'scrolled up, the view did not jump');
    assert.ok((await log.locator('.log-line').count()) <= MAX_DOM_LINES);
  });
});
