// Adding an OpenAPI source in the app (ui/src/pages/sources.ts) in headless Chromium against the
// real hub: the Sources form's "OpenAPI document" kind takes the document's URL (the FastAPI app
// tests/fixtures/openapi_server.py), the source starts with one tool per operation, its edit form
// comes back as an OpenAPI form, and the source's tool tester calls an operation, a real HTTP
// request. Screenshot: docs/screenshots/ui-sources-openapi.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  fakeBrowser,
  forwardedLink,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  cleanup,
  runCapa,
  stopProcess,
  waitFor,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
const PYTHON = path.join(REPO_ROOT, 'tests', '.venv', 'bin', 'python');
const SERVER = path.join(REPO_ROOT, 'tests', 'fixtures', 'openapi_server.py');

const skip = skipOrFail(uiMissing());

describe('an OpenAPI source added in the app', { skip }, () => {
  let sandbox;
  let api;
  let docUrl;
  let hub;
  let browser;
  let page;

  before(async () => {
    sandbox = await makeSandbox('capa-ui-openapi-');
    const portFile = path.join(sandbox.root, 'port');
    api = spawn(PYTHON, [SERVER, portFile], { stdio: ['ignore', 'inherit', 'inherit'] });
    const port = await waitFor('the API server', async () => existsSync(portFile) && (await readFile(portFile, 'utf8')));
    docUrl = `http://127.0.0.1:${port}/openapi.json`;
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    hub = await startHub({ configFile, sandbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
    const before = (await opened.opened()).length;
    const ran = await runCapa(['--config', configFile, 'ui'], { env: sandbox.env });
    assert.equal(ran.code, 0, `capa ui: ${ran.stderr}`);
    const argument = await waitFor('capa ui to open the browser', async () => (await opened.opened())[before]);
    await forwardedLink(argument);
    await page.goto(argument);
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    if (api) await stopProcess(api);
    await cleanup();
    await removeSandboxes();
  });

  it('adds the document as a source with a tool per operation, and edits it as one', async () => {
    await page.goto(`${hub.url}/app/#/sources`);
    await page.locator('main h2').first().waitFor();
    await page.getByLabel('Id').fill('tasks');
    await page.getByLabel('Description').fill('The to-do API');
    await page.getByLabel('OpenAPI document').check();
    assert.equal(await page.getByLabel('Arguments').isVisible(), false, 'the command fields are hidden');
    await page.getByRole('textbox', { name: 'Document' }).fill(docUrl);
    await page.screenshot({ path: path.join(SHOTS, 'ui-sources-openapi.png'), fullPage: true });
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByText(/^Added tasks: ready with 13 tools\.$/).waitFor({ timeout: 30000 });
    const row = page.locator('tr[data-source="tasks"]');
    await row.getByText(`OpenAPI ${docUrl}`).waitFor();

    const global = await waitFor('the global file', async () => {
      const files = await hub.apiJson('/api/sources');
      return files.find((s) => s.id === 'tasks')?.file;
    });
    const text = await readFile(global, 'utf8');
    assert.match(text, /type: openapi/, text);
    assert.match(text, new RegExp(`spec: "${docUrl.replaceAll('.', '\\.')}"`), text);

    await row.getByRole('button', { name: 'Edit tasks' }).click();
    assert.equal(await page.getByLabel('OpenAPI document').isChecked(), true);
    assert.equal(await page.getByRole('textbox', { name: 'Document' }).inputValue(), docUrl);
    await page.getByLabel('Credentials').fill('api_key: ${secret:key}');
    await page.getByRole('button', { name: 'Save' }).click();
    // The credential is not stored yet: once settled, the page says what the source needs (the
    // "Saved tasks; starting…" before it would end the wait too early).
    await page
      .getByText('Saved tasks; it needs a secret before it can start: add it with “Add the secret” below.')
      .waitFor({ timeout: 30000 });
    const saved = await readFile(global, 'utf8');
    assert.match(saved, /auth:\n\s+"api_key": "\$\{secret:key\}"/, saved);
  });

  it('calls an operation from the source page\'s tool tester', async () => {
    // Back without credentials, so that the source runs.
    await page.goto(`${hub.url}/app/#/sources`);
    await page.reload();
    const row = page.locator('tr[data-source="tasks"]');
    await row.getByRole('button', { name: 'Edit tasks' }).click();
    assert.equal(await page.getByLabel('OpenAPI document').isChecked(), true);
    await page.getByLabel('Credentials').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved tasks: ready with 13 tools\.$/).waitFor({ timeout: 30000 });
    await page.goto(`${hub.url}/app/#/sources/tasks`);
    await page.reload();
    await page.getByRole('heading', { name: 'Source tasks' }).waitFor();
    const tester = page.getByRole('region', { name: 'Test a tool' });
    await tester.getByLabel('Tool', { exact: true }).selectOption({ label: 'getTask' });
    await tester.getByLabel('task_id *', { exact: true }).fill('2');
    await tester.getByRole('button', { name: 'Run' }).click();
    await tester.getByText(/^Done in \d+ ms\.$/).waitFor();
    const out = await tester.locator('.tester-output pre').first().textContent();
    assert.match(out, /File the taxes/, out);
  });
});
