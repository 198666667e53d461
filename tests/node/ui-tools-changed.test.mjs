// The review of a changed tool definition in the settings UI (docs/pinning.md), in headless
// Chromium against a real hub serving the hostile rug-pull source (tests/fixtures/
// rug_pull_server.mjs): once `wipe` is re-listed read-only, the Tools page shows the change part by
// part (old lines against new ones) with Accept and Block; Block hides it, Accept (the UI's
// session: a person) makes the new definition the approved one. Screenshot:
// docs/screenshots/ui-tools-changed.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  signInWithCapaUi,
  fakeBrowser,
  NODE,
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
const RUG_PULL = path.join(REPO_ROOT, 'tests', 'fixtures', 'rug_pull_server.mjs');

const skip = skipOrFail(uiMissing());

describe('the Tools page shows a changed tool definition with Accept and Block', { skip }, () => {
  let sandbox;
  let configFile;
  let hub;
  let browser;
  let page;
  let opened;

  const wipe = async () => (await hub.apiJson('/api/tools')).find((t) => t.address === 'evil.wipe');
  const post = (body) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  before(async () => {
    sandbox = await makeSandbox('capa-ui-pins-');
    opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const stateDir = path.join(sandbox.root, 'rug');
    await mkdir(stateDir);
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [{ id: 'evil', command: NODE, args: [RUG_PULL, stateDir] }],
      options: { demo: false, toolExposure: 'code' },
    });
    hub = await startHub({ configFile, sandbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.locator('main h2').first().waitFor();
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('shows the diff, blocks, then accepts from the page', async () => {
    const flipped = await hub.apiJson('/api/call', post({ address: 'evil.flip', arguments: {} }));
    assert.equal(flipped.ok, true, JSON.stringify(flipped));
    await waitFor('the re-listed wipe', async () => (await wipe())?.review === 'changed');

    await page.goto(`${hub.url}/app/#/tools`);
    const review = page.getByRole('region', { name: 'Tool definitions waiting for your review' });
    await review.waitFor();
    const change = review.locator('[data-change="evil.wipe"]');
    await change.waitFor();
    const text = await change.innerText();
    assert.match(text, /- Deletes every file in the workspace\./);
    assert.match(text, /\+ Reads the workspace status/);
    assert.match(text, /"destructiveHint": true/);
    assert.match(text, /"readOnlyHint": true/);
    assert.match(text, /every call asks you/);
    assert.match(await page.locator('tr[data-tool="evil.wipe"]').innerText(), /\[changed\]/);
    await page.screenshot({ path: path.join(SHOTS, 'ui-tools-changed.png'), fullPage: true });

    await page.getByRole('button', { name: 'Block evil.wipe' }).click();
    await page.getByText('Blocked: evil.wipe is hidden').waitFor();
    assert.equal((await wipe()).policy, 'deny');

    await page.getByRole('button', { name: 'Accept the definition of evil.wipe' }).click();
    await page.getByText('Accepted: evil.wipe').waitFor();
    const accepted = await wipe();
    assert.equal(accepted.policy, 'allow', JSON.stringify(accepted));
    assert.equal(accepted.review, undefined, JSON.stringify(accepted));
    // The page reloads its lists after the answer: wait for the card to go rather than race it.
    await review.waitFor({ state: 'detached', timeout: 10000 }).catch(() => {});
    assert.equal(await review.count(), 0, 'the review stays after everything was decided');
  });
});
