// Two pages of one origin signed in one after the other (two `capa ui`, or the app's settings
// window and an approval popup): each login replaces the origin's session cookie, so the page
// that signed in first holds a key the hub no longer pairs with the cookie. It must take the
// newer key from the origin's storage and go on (ui/src/backend/http.ts), not show "missing or
// wrong X-Capa-Csrf header" until someone reloads it. Headless Chromium, one browser context
// (one cookie jar and storage, as the app's windows share), against the real hub.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { chromium } from 'playwright-core';

import {
  signInWithCapaUi,
  fakeBrowser,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  cleanup,
  CHROMIUM,
  uiMissing,
  waitFor,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const skip = skipOrFail(uiMissing());

describe('pages of one origin signed in one after the other', { skip }, () => {
  let sandbox;
  let hub;
  let browser;
  let first;
  let second;
  let signIn;

  before(async () => {
    sandbox = await makeSandbox('capa-ui-sessions-');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    hub = await startHub({ configFile, sandbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    first = await context.newPage();
    second = await context.newPage();
    signIn = (page) => signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('the first page takes the newer session and keeps working, reads, writes and live updates', async () => {
    await signIn(first);
    await first.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
    await signIn(second);
    await second.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();

    // A read: the first page's Sources list loads.
    await first.evaluate(() => (location.hash = '#/sources'));
    await first.locator('tr[data-source="demo"]').waitFor();
    // A write from the first page (pause approvals), seen by the hub.
    await first.evaluate(() => (location.hash = '#/pending'));
    const pause = first.getByRole('checkbox', { name: /pause approvals/i });
    await pause.check();
    const paused = async () => (await hub.apiJson('/api/approvals')).paused;
    // The click returns before the page's PUT has reached the hub: wait for the hub to say so.
    await waitFor('the hub to record the pause', paused, { timeoutMs: 10_000 });
    assert.equal(await paused(), true);
    // A live update on the first page's event stream, made from the second page.
    await second.evaluate(() => (location.hash = '#/pending'));
    await second.getByRole('checkbox', { name: /pause approvals/i }).uncheck();
    await first.waitForFunction(
      () => !document.querySelector('input[type="checkbox"]')?.checked,
      undefined,
      { timeout: 10_000 },
    );
    assert.equal(await paused(), false);
    for (const page of [first, second]) {
      assert.doesNotMatch(await page.content(), /X-Capa-Csrf/, 'a page shows the session refusal');
    }
  });
});
