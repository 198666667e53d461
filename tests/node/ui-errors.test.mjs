// Errors a person can read (issue 18, item 4), in headless Chromium: a source that cannot connect
// shows one sentence with a fix ("could not reach http://127.0.0.1:<port>/mcp: connection
// refused…"), never a Rust type dump; a long error wraps inside its cell, and the row's Edit,
// Restart and Remove stay on screen (checked by element geometry at a narrow window); adding a
// source that cannot start says so as an error, not as a green "Added".
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
  cleanup,
  waitFor,
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
const skip = skipOrFail(uiMissing());

/** A loopback port nothing listens on: 1 (tcpmux), below the ephemeral range. A port bound to 0
 * and closed, as this test took before, can be handed to another test's server running beside it
 * (node runs two test files at once), which then answers where a refusal was expected; that
 * failed a CI run. */
const REFUSED_PORT = 1;

describe('source errors in the UI', { skip }, () => {
  let sandbox, hub, browser, page, port, configFile;
  // A long path, so the sentence is longer than its cell.
  const longPath = `/mcp/${'very-long-segment-'.repeat(8)}end`;

  before(async () => {
    port = REFUSED_PORT;
    sandbox = await makeSandbox('capa-ui-errors-');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [{ id: 'unreachable', url: `http://127.0.0.1:${port}${longPath}` }],
      options: { demo: true, toolExposure: 'code' },
    });
    // The unreachable source never gets ready: wait for the hub only.
    hub = await startHub({ configFile, sandbox, waitReady: false });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    // Narrow: the width of a small laptop's half screen.
    page = await browser.newPage({ viewport: { width: 900, height: 800 } });
    page.on('dialog', (dialog) => dialog.accept());
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
    await mkdir(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await cleanup();
    await removeSandboxes();
  });

  it('shows one readable sentence and keeps the row inside the window', async () => {
    await page.goto(`${hub.url}/app/#/sources`);
    const row = page.locator('tr[data-source="unreachable"]');
    const error = row.locator('td.error-text');
    await waitFor('the unreachable source to fail', async () => ((await error.textContent()) || null));
    const text = (await error.textContent()).trim();
    assert.match(text, new RegExp(`could not reach http://127\\.0\\.0\\.1:${port}/mcp/.*: connection refused`));
    assert.doesNotMatch(text, /rmcp::|Transport \[|WorkerTransport|os error/);

    const width = await page.evaluate(() => document.documentElement.clientWidth);
    for (const name of ['Edit unreachable', 'Restart unreachable', 'Remove unreachable']) {
      const box = await page.getByRole('button', { name }).boundingBox();
      assert.ok(box, `${name} is not rendered`);
      assert.ok(box.x >= 0 && box.x + box.width <= width, `${name} is off-screen: ${JSON.stringify(box)} in ${width}`);
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    // The text wrapped inside its cell rather than widening it.
    const cell = await error.boundingBox();
    assert.ok(cell.height > 40, `the error did not wrap: ${JSON.stringify(cell)}`);
    await page.screenshot({ path: path.join(SHOTS, 'ui-sources-error.png'), fullPage: true });
  });

  it('says a source that cannot start was added with an error, not a success', async () => {
    await page.goto(`${hub.url}/app/#/sources`);
    await page.getByLabel('Id').fill('broken');
    await page.locator('#kind-url').check();
    await page.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${port}/mcp`);
    await page.getByRole('button', { name: 'Add source' }).click();
    const result = page.locator('.notice').filter({ hasText: 'broken' }).last();
    await waitFor('the add to settle', async () => {
      const cls = await result.getAttribute('class');
      return cls && !cls.includes('info') ? cls : null;
    });
    assert.match(await result.getAttribute('class'), /\berror\b/);
    assert.match(await result.textContent(), /Added broken, but it cannot start: could not reach http:\/\/127\.0\.0\.1:\d+\/mcp: connection refused/);
  });
});
