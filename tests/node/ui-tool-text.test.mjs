// Flagged tool text on the Tools page (issue 39, case 3; docs/tool-text.md), in headless Chromium
// against a real hub serving a hostile MCP server (tests/fixtures/poisoned-server.mjs): each flagged
// tool shows its rules and messages with hidden characters escaped, and Block (its switch off) and
// Accept (this exact text); the Sources page counts the flagged tools. Screenshot:
// docs/screenshots/ui-tools-flagged.png.
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
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
const POISONED_JS = path.join(REPO_ROOT, 'tests', 'fixtures', 'poisoned-server.mjs');
/** What must never be shown raw: ESC, BEL, bidi controls, zero-width, tags. */
const RAW = /[\u001b\u0007\u202a-\u202e\u2066-\u2069\u200b-\u200f\u{e0000}-\u{e007f}]/u;

const skip = skipOrFail(uiMissing());

describe('flagged tool text in the browser', { skip }, () => {
  let sandbox;
  let configFile;
  let hub;
  let browser;
  let page;

  const tool = async (address) => (await hub.apiJson('/api/tools')).find((t) => t.address === address);
  const warnings = (address) => page.locator(`tr[data-flags-of="${address}"]`);

  before(async () => {
    sandbox = await makeSandbox('capa-ui-tool-text-');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [{ id: 'poison', command: NODE, args: [POISONED_JS] }],
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
    await cleanup();
    await removeSandboxes();
  });

  it('shows each flagged tool with its rules, its text escaped, Block and Accept', async () => {
    await page.goto(`${hub.url}/app/#/tools`);
    await warnings('poison.add').waitFor();
    const add = await warnings('poison.add').innerText();
    for (const code of ['hidden_characters', 'control_characters', 'addresses_the_model', 'names_other_tools', 'credential_path']) {
      assert.ok(add.includes(code), add);
    }
    assert.match(add, /a model reads as "ignore previous instructions/, add);
    assert.match(await warnings('poison.helper').innerText(), /addresses the model/);
    assert.equal(await warnings('poison.clean_echo').count(), 0, 'a clean tool has no warning');
    const paint = await page.locator('tr[data-tool="poison.paint"]').innerText();
    assert.match(paint, /Shows a note\.\\u\{1b\}\[2J/, paint);
    assert.doesNotMatch(await page.locator('main').innerText(), RAW);
    await page.locator('section[data-source-group="poison"]').screenshot({ path: path.join(SHOTS, 'ui-tools-flagged.png') });
  });

  it('accepts one tool for its text and blocks another', async () => {
    await page.getByRole('button', { name: 'Accept poison.helper', exact: true }).click();
    await page.getByText('poison.helper is accepted as it reads now').waitFor();
    await page.locator('tr[data-tool="poison.helper"]').getByText('text accepted').waitFor();
    assert.equal(await warnings('poison.helper').count(), 0);
    assert.equal((await tool('poison.helper')).textReview.accepted, true);

    await page.getByRole('button', { name: 'Block poison.paint', exact: true }).click();
    await page.getByText('poison.paint is blocked (off).').waitFor();
    assert.equal((await tool('poison.paint')).policy, 'deny');
    // The notice comes before the list is drawn again: wait for the switch to show the block.
    await page.locator('input[role="switch"][aria-label="Tool poison.paint"]:not(:checked)').waitFor();

    await page.goto(`${hub.url}/app/#/sources`);
    await page.locator('[data-flagged="poison"]').getByText('2 flagged').waitFor();
  });
});
