// The browser approval page, end to end: a TS SDK 1.x client without elicitation runs code that
// calls the destructive `demo.delete_note`; the hub answers `awaiting_approval`, tells the model only
// that a page opened, and starts the "browser" in CAPA_BROWSER (a script that records the URL). Real
// Chromium (playwright-core) follows the one-time link, shows the call, and approves it; the client
// then resumes the run to `completed`. Also: the link works once, decisions need the session cookie,
// the CSRF token and the hub's origin, and a secret in the arguments never reaches the page.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  REPO_ROOT,
  fakeBrowser,
  forwardedLink,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  rawRequest,
  waitFor,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = path.join(REPO_ROOT, 'docs', 'screenshots', 'approval-page.png');
const CANARY = 'canary-3f9c1b7e-never-on-the-page';

// Skips without Chromium when run by hand; under scripts/test (CAPA_REQUIRE_ALL) that fails.
const skip = skipOrFail(
  !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}: install it with \`apt-get install chromium\` (or \`scripts/setup --test\`)`,
);

// Writes a note (allowed) and deletes it (asks). `password` is an extra field the demo tool ignores;
// the redacted preview must not show its value.
const CODE = `
await demo.write_note({ title: "doomed", text: "bye" });
const deleted = await demo.delete_note({ title: "doomed", password: "${CANARY}" });
return { deleted, left: await demo.list_notes({}) };
`;
const RESULT = { deleted: 'deleted note "doomed"', left: [] };

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return { envelope: result.structuredContent, text: resultText(result) };
}

const form = (fields) => new URLSearchParams(fields).toString();

describe('approval page in the browser', { skip }, () => {
  let sandbox;
  let hub;
  let client;
  let browser;
  let opened; // what the fake browser was given (fakeBrowser in support.mjs)

  before(async () => {
    sandbox = await makeSandbox('capa-page-');
    opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: true, toolExposure: 'code' },
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'e2e-approval-page' }); // no elicitation capability
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    await closeClient(client);
    await cleanup();
    await removeSandboxes();
  });

  it('opens a one-time page, refuses forged decisions, approves, and the run resumes', async () => {
    // The run pauses; the model hears that a page opened, and gets no URL or token.
    const paused = await execute(client, { code: CODE });
    const { envelope } = paused;
    assert.equal(envelope.status, 'awaiting_approval', JSON.stringify(envelope));
    const runId = envelope.runId;
    const [pending] = envelope.pending;
    assert.equal(pending.address, 'demo.delete_note');
    assert.match(pending.message, /approval page opened on the user's screen/, pending.message);
    const told = JSON.stringify(envelope) + paused.text;
    assert.doesNotMatch(told, /https?:\/\/|\/approve\//, told);

    const [argument, ...more] = await waitFor('the browser to be started', async () => {
      const lines = await opened.opened();
      return lines.length ? lines : null;
    });
    assert.equal(more.length, 0, `opened once: ${argument} ${more}`);
    // The browser gets a private page that forwards to the link: no secret in any argv.
    const url = await forwardedLink(argument);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/approve\/[0-9a-f]{64}$/);
    const token = url.split('/').pop();
    const cmdlines = await waitFor('the browser command line', async () => (await opened.cmdlines()).join('\n') || null);
    assert.ok(cmdlines.includes(argument.slice('file://'.length)) || cmdlines.includes(argument), cmdlines);
    assert.ok(!cmdlines.includes(token), `the link secret is in /proc/<pid>/cmdline: ${cmdlines}`);
    assert.ok(!told.includes(token));
    assert.ok(!hub.log().includes(token), 'the link token is not logged');
    assert.match(hub.log(), new RegExp(`opened the approval page for run ${runId}`));

    // The forwarding page sends Chromium on to the link, which starts a session and lands on
    // the run's page.
    const page = await browser.newPage();
    const landing = page.waitForResponse((r) => r.url().startsWith(`${hub.url}/approve/run/${runId}`));
    await page.goto(argument);
    const landed = await landing;
    await page.waitForURL(`${hub.url}/approve/run/${runId}**`);
    assert.equal(landed.status(), 200);
    assert.match(page.url(), new RegExp(`^${hub.url}/approve/run/${runId}\\?k=[0-9a-f]{64}$`));
    const headers = landed.headers();
    assert.equal(
      headers['content-security-policy'],
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    );
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['cache-control'], 'no-store');
    // same-origin, not no-referrer: under no-referrer Chromium posts the page's forms with `Origin: null`.
    assert.equal(headers['referrer-policy'], 'same-origin');
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === `capa_approval_${new URL(hub.url).port}`);
    assert.ok(cookie, 'session cookie set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/approve');

    const body = page.locator('body');
    await assert.doesNotReject(body.getByText('demo.delete_note', { exact: true }).first().waitFor());
    const preview = JSON.parse(await page.locator('pre').first().textContent());
    assert.equal(preview.title, 'doomed');
    assert.ok('password' in preview, 'the extra field reached the preview, redacted');
    const html = await page.content();
    assert.ok(!html.includes(CANARY), 'the secret argument is not on the page');
    for (const title of ['Approve once', 'Approve for the rest of this run', 'Always allow demo.delete_note', 'Deny']) {
      assert.equal(await page.getByRole('button', { name: title, exact: true }).count(), 1, title);
    }
    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The same link a second time: gone.
    const again = await fetch(url, { redirect: 'manual' });
    assert.equal(again.status, 410);
    assert.match(await again.text(), /used or has expired/);

    // Forged decisions: each is refused and nothing is decided.
    const csrf = await page.locator('input[name=csrf]').first().getAttribute('value');
    const decideUrl = `${hub.url}/approve/run/${runId}/decide`;
    const post = (fields, extra = {}) =>
      fetch(decideUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: `${cookie.name}=${cookie.value}`,
          Origin: hub.url,
          ...extra,
        },
        body: form(fields),
      });
    const approveOnce = { approval: pending.id, choice: 'approve_once' };
    const forged = {
      'no csrf': await post(approveOnce),
      'wrong csrf': await post({ ...approveOnce, csrf: 'f'.repeat(64) }),
      'no cookie': await post({ ...approveOnce, csrf }, { Cookie: '' }),
      'foreign origin': await post({ ...approveOnce, csrf }, { Origin: 'http://evil.example' }),
      'other port': await post({ ...approveOnce, csrf }, { Origin: 'http://127.0.0.1:1' }),
      'from another site': await post({ ...approveOnce, csrf }, { 'Sec-Fetch-Site': 'same-site' }),
    };
    for (const [what, res] of Object.entries(forged)) assert.equal(res.status, 403, what);
    // Another local service the browser visits receives the cookie (cookies ignore ports); the
    // cookie alone does not show it the page, nor its CSRF token.
    const replay = (query) => fetch(`${hub.url}/approve/run/${runId}${query}`, {
      headers: { Cookie: `${cookie.name}=${cookie.value}` },
    });
    for (const query of ['', '?k=', `?k=${'f'.repeat(64)}`]) {
      const res = await replay(query);
      assert.equal(res.status, 403, `replayed cookie with ${query || 'no key'}`);
      assert.ok(!(await res.text()).includes(csrf));
    }
    const rebound = await rawRequest(`${hub.url}/approve/run/${runId}`, {
      headers: { Host: `evil.example:${new URL(hub.url).port}`, Cookie: `${cookie.name}=${cookie.value}` },
    });
    assert.equal(rebound.status, 403, 'the Host check still applies to the page');
    assert.equal((await fetch(`${hub.url}/api/approvals`)).status, 401, 'the API still needs the token');
    const still = await hub.apiJson('/api/approvals');
    assert.deepEqual(still.pending.map((p) => p.id), [pending.id], 'still pending');

    // A person approves once; the page then has nothing left.
    await page.getByRole('button', { name: 'Approve once', exact: true }).click();
    await page.getByText('Nothing is waiting. Return to your AI client; it will continue.').waitFor();
    assert.match(page.url(), new RegExp(`^${hub.url}/approve/run/${runId}\\?k=[0-9a-f]{64}$`));
    assert.ok((await page.content()).includes('Approved once.'));
    assert.deepEqual((await hub.apiJson('/api/approvals')).pending, []);

    const done = await execute(client, { resume: runId });
    assert.equal(done.envelope.status, 'completed', JSON.stringify(done.envelope));
    assert.deepEqual(done.envelope.result, RESULT);
  });
});
