// The Welcome page's HTTP snippet works after a restart (issue 41): it used to paste
// `$(cat …/token)`, and the token is new at every start of the hub. Now the page makes the client a
// key of its own (pairing it); the snippet, pasted as is into a shell, adds the server to Claude
// Code (npm @anthropic-ai/claude-code, no model) with a throwaway HOME; the hub restarts at the
// same address with a new token; `claude mcp list` still reports the server connected, and a TS
// SDK client with the key lists the tools. Screenshot: docs/screenshots/ui-welcome-http-key.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  signInWithCapaUi,
  fakeBrowser,
  connectHttp,
  closeClient,
  freePort,
  NODE,
  NODE_MODULES,
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
const CLAUDE_CLI = path.join(NODE_MODULES, '@anthropic-ai', 'claude-code', 'cli-wrapper.cjs');
const skip = skipOrFail(uiMissing() || (!existsSync(CLAUDE_CLI) && 'no @anthropic-ai/claude-code in node_modules: run `npm ci`') || null);

describe('the Welcome page\'s HTTP snippet', { skip, timeout: 240000 }, () => {
  let sandbox;
  let hub;
  let browser;
  let page;
  let configFile;
  let address;
  let env;

  before(async () => {
    sandbox = await makeSandbox('capa-http-key-');
    const home = path.join(sandbox.root, 'home');
    await mkdir(home);
    sandbox.env.HOME = home;
    for (const name of ['XDG_CONFIG_HOME', 'CLAUDE_CONFIG_DIR']) delete sandbox.env[name];
    // `claude` on PATH, as a person who installed Claude Code has it.
    const bin = path.join(sandbox.root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'claude'), `#!/bin/sh\nexec '${NODE}' '${CLAUDE_CLI}' "$@"\n`);
    await chmod(path.join(bin, 'claude'), 0o755);
    env = {
      ...sandbox.env,
      PATH: `${bin}:${process.env.PATH}`,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    address = `127.0.0.1:${await freePort()}`;
    hub = await startHub({ configFile, sandbox, http: address });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await cleanup();
    await removeSandboxes();
  });

  it('gives a key of the client\'s own that still connects after the hub restarts with a new token', async () => {
    const snippet = page.locator('pre[data-client="Any client over HTTP"]');
    await snippet.waitFor();
    const before = await snippet.textContent();
    assert.ok(!before.includes('token') && !before.includes('$('), before);
    await page.getByRole('button', { name: 'Make a key for this client' }).click();
    await page.getByText('The key is shown this once').waitFor();
    const text = await snippet.textContent();
    const key = text.match(/capa_client_[0-9a-f]{64}/)?.[0];
    assert.ok(key, text);
    assert.equal(text, `claude mcp add --scope user --transport http capa http://${address}/mcp \\\n  --header 'Authorization: Bearer ${key}'`);
    await page.getByRole('button', { name: 'Copy the HTTP config' }).waitFor();
    await mkdir(SHOTS, { recursive: true });
    await page.locator('.card', { has: snippet }).screenshot({ path: path.join(SHOTS, 'ui-welcome-http-key.png') });
    const paired = await hub.apiJson('/api/clients/paired');
    assert.deepEqual(paired.map((c) => c.name), ['HTTP client']);

    // Pasted as is into a shell.
    const added = spawnSync('sh', ['-c', text], { env, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
    assert.equal(added.status, 0, `${added.stdout}\n${added.stderr}`);

    // The hub restarts at the same address; its token is new.
    const oldToken = hub.token;
    await hub.stop();
    hub = await startHub({ configFile, sandbox, http: address });
    assert.notEqual(hub.token, oldToken);

    const listed = spawnSync(NODE, [CLAUDE_CLI, 'mcp', 'list'], { env, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
    assert.equal(listed.status, 0, `claude mcp list: ${listed.stdout}\n${listed.stderr}`);
    assert.match(listed.stdout, /^capa: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - [✓✔] Connected$/m, listed.stdout);

    const client = await connectHttp({ mcpUrl: hub.mcpUrl, token: key }, { name: 'e2e-http-key' });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['describe', 'execute', 'search']);
    } finally {
      await closeClient(client);
    }
  });
});
