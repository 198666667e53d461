// A run's kept results (ui/src/pages/run-handles.ts) in headless Chromium against the real hub: a
// TypeScript SDK client's `execute` returns a 260 KB result from the Python SDK fixture
// tests/fixtures/sized_server.py, so the hub keeps it whole; the run's page lists the handle with
// its size and shape, "Show" reads its first 16 KB (the text that starts the kept JSON), and the
// page stays within the window's width. Screenshot: docs/screenshots/ui-run-handles.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  signInWithCapaUi,
  fakeBrowser,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
const PYTHON = path.join(REPO_ROOT, 'tests', '.venv', 'bin', 'python');
const SIZED = path.join(REPO_ROOT, 'tests', 'fixtures', 'sized_server.py');
const WIDTH = 1280;

const skip = skipOrFail(uiMissing());

describe("a run's kept results in the app", { skip }, () => {
  let sandbox;
  let hub;
  let client;
  let browser;
  let page;
  let run;

  before(async () => {
    sandbox = await makeSandbox('capa-ui-handles-');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: false, toolExposure: 'code' },
      servers: [{ id: 'sized', command: PYTHON, args: [SIZED] }],
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'ui-handles' });
    const res = await client.callTool(
      { name: 'execute', arguments: { code: 'return await sized.items({ count: 2000 })' } },
      undefined,
      { timeout: 60_000 },
    );
    run = res.structuredContent;
    assert.equal(run.status, 'completed', JSON.stringify(run).slice(0, 2000));
    assert.equal(run.handles?.length, 1, JSON.stringify(run.handles));

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('lists the handle with its size and shape, and shows its first 16 KB', async () => {
    const [kept] = run.handles;
    await page.goto(`${hub.url}/app/#/runs/${encodeURIComponent(run.runId)}`);
    await page.getByRole('heading', { name: 'Kept results' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: kept.handle }) });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    assert.equal(cells[0], 'result (object)');
    assert.match(cells[1], /\d+(\.\d+)? KB/);
    assert.equal(cells[2], 'object with 2 keys: items, total');

    await row.getByRole('button', { name: 'Show' }).click();
    const shown = page.getByLabel(`Kept result ${kept.handle}`);
    await shown.waitFor();
    const text = await shown.textContent();
    assert.ok(text.startsWith('{"items":[{"id":0,"title":"item 0 xxx'), text.slice(0, 80));
    assert.equal(Buffer.byteLength(text), 16 * 1024, 'the person sees the first 16 KB');
    await page.getByText(/: the first 16\.0 KB of \d+\.\d KB$/).waitFor();

    // Nothing pushes the page wider than the window, however long the kept text.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= WIDTH, `page is ${wide}px wide in a ${WIDTH}px window`);
    const box = await shown.boundingBox();
    assert.ok(box && box.x + box.width <= WIDTH && box.height <= 440, JSON.stringify(box));
    await page.screenshot({ path: path.join(SHOTS, 'ui-run-handles.png'), fullPage: true });
  });
});
