// The Clients page (ui/src/pages/clients.ts, GET/POST /api/clients…) in headless Chromium, with a
// throwaway HOME holding real config files of each client: Claude Code's ~/.claude.json (other
// keys and servers), Claude Desktop's claude_desktop_config.json, Cursor's ~/.cursor/mcp.json,
// VS Code's user mcp.json with comments and a trailing comma (JSONC), and Codex's config.toml with
// other tables. Each is connected from the page (diff first, then Apply), read back with a real
// parser (JSON.parse, jsonc-parser, Python's tomllib), undone to the exact bytes, connected again
// and disconnected. Then Claude Code's own `claude mcp list` (npm @anthropic-ai/claude-code, no
// model) runs with that HOME and reports the `capa` server connected. Screenshot:
// docs/screenshots/ui-clients.png (ui.test.mjs takes ui-welcome.png).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';

import { chromium } from 'playwright-core';
import { parse as parseJsonc } from 'jsonc-parser';

import {
  signInWithCapaUi,
  fakeBrowser,
  CAPA_BIN,
  EVERYTHING_JS,
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

function missing() {
  return (
    uiMissing() ||
    (!existsSync(CLAUDE_CLI) && 'no @anthropic-ai/claude-code in node_modules: run `npm ci`') ||
    (spawnSync('python3', ['-c', 'import tomllib']).status !== 0 && 'no Python 3.11+ (tomllib) for reading TOML back') ||
    null
  );
}
const skip = skipOrFail(missing());

/**
 * The entry without its `env.CAPA_CLIENT_KEY`, after checking the key is a client key: Connect
 * pairs the client (docs/security.md, "Who may say yes").
 */
function withoutKey(entry) {
  assert.match(entry?.env?.CAPA_CLIENT_KEY ?? '', /^capa_client_[0-9a-f]{64}$/, JSON.stringify(entry));
  const { env, ...rest } = entry;
  const { CAPA_CLIENT_KEY, ...others } = env;
  return Object.keys(others).length ? { ...rest, env: others } : rest;
}

/** `text` as a literal in a regular expression. */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** TOML read back with Python's tomllib, as JSON. */
function parseToml(text) {
  const out = execFileSync('python3', ['-c', 'import sys, json, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], {
    input: text,
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

// Claude Code writes ~/.claude.json with JSON.stringify(…, null, 2); this one has history, a
// project and a server of the user's.
const CLAUDE_JSON = `${JSON.stringify(
  {
    numStartups: 42,
    installMethod: 'npm-global',
    autoUpdates: false,
    hasCompletedOnboarding: true,
    tipsHistory: { 'new-user-warmup': 7, 'shift-enter': 12 },
    mcpServers: { mine: { type: 'stdio', command: NODE, args: [EVERYTHING_JS, 'stdio'], env: {} } },
    projects: { '/home/u/work': { allowedTools: [], history: [{ display: 'fix the “tests” ✓', pastedContents: {} }], lastCost: 0.1234 } },
    userID: 'a1b2c3',
  },
  null,
  2,
)}`;
const DESKTOP_JSON = '{\n  "globalShortcut": "Ctrl+Space",\n  "mcpServers": {\n    "files": {\n      "command": "npx",\n      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/u"]\n    }\n  }\n}\n';
const CURSOR_JSON = '{\n  "mcpServers": {}\n}\n';
const VSCODE_JSONC =
  '{\n  // My servers (VS Code reads this file as JSON with comments)\n  "servers": {\n    "git": { "type": "stdio", "command": "uvx", "args": ["mcp-server-git"] }, /* keep */\n  },\n  "inputs": [],\n}\n';
const CODEX_TOML =
  '# my Codex\nmodel = "o3"\napproval_policy = "on-request"\n\n[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "other"]\n\n[profiles.fast]\nmodel = "o4-mini"\n';

describe('Clients page with a fake HOME', { skip }, () => {
  let sandbox;
  let home;
  let hub;
  let browser;
  let page;
  let capa;
  const files = {};

  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `ui-${name}.png`), fullPage: true });
  const card = (id) => page.locator(`.card.client[data-client="${id}"]`);
  const badge = (id) => card(id).locator('.badge');
  const status = (id, value) => card(id).locator(`.badge[data-status="${value}"]`).waitFor();
  const read = (id) => readFile(files[id], 'utf8');

  /** Connect (or disconnect) from the page: the diff first, then Apply. Returns the diff's text. */
  async function change(id, action, label) {
    await card(id).getByRole('button', { name: `${action} ${label}` }).click();
    const diff = card(id).locator('pre.diff');
    await diff.waitFor();
    const text = await diff.textContent();
    await card(id).getByRole('button', { name: 'Apply' }).click();
    await card(id).locator('.notice.ok').waitFor();
    return text;
  }

  async function undo(id, label) {
    await card(id).getByRole('button', { name: `Undo the last change to ${label}'s file` }).click();
    await card(id).getByText('Put back').waitFor();
  }

  before(async () => {
    sandbox = await makeSandbox('capa-clients-');
    home = path.join(sandbox.root, 'home');
    sandbox.env.HOME = home;
    for (const name of ['XDG_CONFIG_HOME', 'CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'APPDATA']) delete sandbox.env[name];
    Object.assign(files, {
      'claude-code': path.join(home, '.claude.json'),
      'claude-desktop': path.join(home, '.config', 'Claude', 'claude_desktop_config.json'),
      cursor: path.join(home, '.cursor', 'mcp.json'),
      vscode: path.join(home, '.config', 'Code', 'User', 'mcp.json'),
      codex: path.join(home, '.codex', 'config.toml'),
    });
    const texts = { 'claude-code': CLAUDE_JSON, 'claude-desktop': DESKTOP_JSON, cursor: CURSOR_JSON, vscode: VSCODE_JSONC, codex: CODEX_TOML };
    for (const [id, file] of Object.entries(files)) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, texts[id]);
    }
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
    // A named profile a client can be connected to (docs/profiles.md).
    await appendFile(configFile, 'profiles:\n  review:\n    toolExposure: search\n    sources: [demo]\n');
    hub = await startHub({ configFile, sandbox });
    capa = realpathSync(CAPA_BIN);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
    await signInWithCapaUi(page, { capaArgs: ['--config', configFile, 'ui'], env: sandbox.env, opened });
    await page.getByRole('heading', { name: 'Welcome to Capabilities' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await cleanup();
    await removeSandboxes();
  });

  it('the Welcome page gives snippets with the absolute capa path, never the token', async () => {
    const claude = page.locator('pre[data-client="Claude Code"]');
    await claude.waitFor();
    assert.equal(await claude.textContent(), `claude mcp add --scope user capa -- ${capa} mcp`);
    const cursor = JSON.parse(await page.locator('pre[data-client="Cursor"]').textContent());
    assert.deepEqual(cursor, { mcpServers: { capa: { command: capa, args: ['mcp'] } } });
    const codex = parseToml(await page.locator('pre[data-client="Codex"]').textContent());
    assert.deepEqual(codex, { mcp_servers: { capa: { command: capa, args: ['mcp'] } } });
    // Over HTTP the client gets a key of its own (ui-http-key.test.mjs), never the token.
    const http = await page.locator('pre[data-client="Any client over HTTP"]').textContent();
    assert.match(http, /^claude mcp add --scope user --transport http capa /, http);
    assert.ok(!(await page.content()).includes(hub.token), 'the token is not in the page');
    await page.getByRole('link', { name: 'Connect a client in one click' }).waitFor();
  });

  it('lists each client with its file and status', async () => {
    await page.getByRole('link', { name: 'Connect a client in one click' }).click();
    await page.getByRole('heading', { name: 'Clients', exact: true }).waitFor();
    for (const [id, file] of Object.entries(files)) {
      await assert.doesNotReject(card(id).getByText(file, { exact: true }).waitFor(), id);
      assert.equal(await badge(id).getAttribute('data-status'), 'not_connected', id);
    }
    const nav = await page.locator('nav a').allTextContents();
    assert.equal(nav[1], 'Clients', nav.join(', '));
    assert.ok(!(await page.content()).includes(hub.token), 'the token is not in the page');
  });

  it('connects Claude Code: only the capa member is added, undo restores the bytes, disconnect removes only ours', async () => {
    const diff = await change('claude-code', 'Connect', 'Claude Code');
    assert.ok(diff.includes(`+    "capa": {`) && diff.includes(capa), diff);
    await status('claude-code', 'connected');
    const text = await read('claude-code');
    const parsed = JSON.parse(text);
    assert.deepEqual(withoutKey(parsed.mcpServers.capa), { command: capa, args: ['mcp'] });
    // The key is in the file, never on the page: the diff shows it masked.
    const key = parsed.mcpServers.capa.env.CAPA_CLIENT_KEY;
    assert.ok(!diff.includes(key) && diff.includes("capa_client_… (this client's own key)"), diff);
    assert.ok(!(await page.content()).includes(key), 'the key is not in the page');
    await card('claude-code').locator('.badge[data-paired="true"]').waitFor();
    const original = JSON.parse(CLAUDE_JSON);
    delete parsed.mcpServers.capa;
    assert.deepEqual(parsed, original, 'every other key and value stays');
    assert.deepEqual(Object.keys(JSON.parse(text)), Object.keys(original), 'key order stays');
    // Byte for byte outside the new member: it is inserted after the user's last server.
    const cut = CLAUDE_JSON.indexOf('\n  },\n  "projects"');
    assert.ok(text.startsWith(CLAUDE_JSON.slice(0, cut)) && text.endsWith(CLAUDE_JSON.slice(cut)), text);

    await undo('claude-code', 'Claude Code');
    assert.equal(await read('claude-code'), CLAUDE_JSON);
    await status('claude-code', 'not_connected');

    await change('claude-code', 'Connect', 'Claude Code');
    await change('claude-code', 'Disconnect', 'Claude Code');
    assert.equal(await read('claude-code'), CLAUDE_JSON, 'disconnect leaves the file as it was');
    await change('claude-code', 'Connect', 'Claude Code');
    await status('claude-code', 'connected');
  });

  it('connects Claude Desktop and Cursor (JSON), VS Code (JSONC, typed) and Codex (TOML), each undone and redone', async () => {
    const cases = [
      ['claude-desktop', 'Claude Desktop', DESKTOP_JSON, JSON.parse, (v) => v.mcpServers, { command: capa, args: ['mcp'] }],
      ['cursor', 'Cursor', CURSOR_JSON, JSON.parse, (v) => v.mcpServers, { command: capa, args: ['mcp'] }],
      ['vscode', 'VS Code', VSCODE_JSONC, (t) => parseJsonc(t, [], { allowTrailingComma: true }), (v) => v.servers, { type: 'stdio', command: capa, args: ['mcp'] }],
      ['codex', 'Codex', CODEX_TOML, parseToml, (v) => v.mcp_servers, { command: capa, args: ['mcp'] }],
    ];
    for (const [id, label, original, parse, servers, wanted] of cases) {
      await change(id, 'Connect', label);
      await status(id, 'connected');
      const value = parse(await read(id));
      assert.deepEqual(withoutKey(servers(value).capa), wanted, id);
      delete servers(value).capa;
      assert.deepEqual(value, parse(original), `${id}: the rest is untouched`);
      await undo(id, label);
      assert.equal(await read(id), original, `${id}: undo restores the bytes`);
      await change(id, 'Connect', label);
    }
    const vscode = await read('vscode');
    assert.ok(vscode.includes('// My servers') && vscode.includes('/* keep */'), vscode);
    assert.ok((await read('codex')).startsWith('# my Codex\nmodel = "o3"\n'));

    // Disconnect takes out only capa's entry.
    await change('codex', 'Disconnect', 'Codex');
    assert.deepEqual(parseToml(await read('codex')), parseToml(CODEX_TOML));
    await change('vscode', 'Disconnect', 'VS Code');
    assert.equal(await read('vscode'), VSCODE_JSONC);
    await change('codex', 'Connect', 'Codex');

    // A preview shows the diff before anything is written; the screenshot keeps it open.
    await card('vscode').getByRole('button', { name: 'Connect VS Code' }).click();
    await card('vscode').locator('pre.diff').waitFor();
    assert.equal(await read('vscode'), VSCODE_JSONC, 'a preview writes nothing');
    await shot('clients');
    await card('vscode').getByRole('button', { name: 'Cancel' }).click();
  });

  it('refuses a preview of a file that changed since, and an entry capa did not write', async () => {
    await card('cursor').getByRole('button', { name: 'Disconnect Cursor' }).click();
    await card('cursor').locator('pre.diff').waitFor();
    const mine = '{\n  "mcpServers": {\n    "capa": { "command": "npx", "args": ["capa-server"] }\n  }\n}\n';
    await writeFile(files.cursor, mine);
    await card('cursor').getByRole('button', { name: 'Apply' }).click();
    await card('cursor').getByText('changed since the change was shown').waitFor();
    assert.equal(await read('cursor'), mine);
    await status('cursor', 'other');
    assert.equal(await card('cursor').getByRole('button', { name: 'Disconnect Cursor' }).count(), 0);
    // Connect replaces it only after saying so with the diff.
    await card('cursor').getByRole('button', { name: 'Connect Cursor' }).click();
    await card('cursor').getByText('replaces a `capa` entry capa did not write (`npx capa-server`)').waitFor();
    await card('cursor').getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await read('cursor'), mine);
  });

  it('writes need a person: the token alone is refused', async () => {
    const res = await hub.api('/api/clients/cursor/preview', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: 'connect' }),
    });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error.code, 'person_required');
    const listed = await hub.apiJson('/api/clients');
    assert.equal(listed.capaCommand, capa);
    assert.equal(listed.tokenFile, path.join(sandbox.dataDir, 'token'));
    assert.ok(!JSON.stringify(listed).includes(hub.token));
  });

  it('`claude mcp list` (Claude Code itself) reports the capa server connected', async () => {
    const env = { ...sandbox.env, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    const out = spawnSync(NODE, [CLAUDE_CLI, 'mcp', 'list'], { env, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
    assert.equal(out.status, 0, `claude mcp list: ${out.stdout}\n${out.stderr}`);
    const line = out.stdout.split('\n').find((l) => l.startsWith('capa:'));
    assert.ok(line, out.stdout);
    assert.match(line, new RegExp(`^capa: ${escape(capa)} mcp - [✓✔] Connected$`), out.stdout);
    // The user's own server is still there and works, as Claude Code reads the file.
    assert.match(out.stdout, new RegExp(`^mine: ${escape(NODE)} ${escape(EVERYTHING_JS)} stdio - [✓✔] Connected$`, 'm'));
  });

  it('switches Claude Code to a named profile: the entry runs capa mcp --profile, and Claude Code connects', async () => {
    await page.getByRole('link', { name: 'Clients' }).click();
    await card('claude-code').locator('.hint', { hasText: 'over stdio, profile default' }).waitFor();
    // The Profiles card: each profile with its mode, what it serves and how a client reaches it.
    const review = page.locator('section.profiles tr[data-profile="review"]');
    await review.waitFor();
    const reviewText = await review.textContent();
    for (const part of ['search', 'sources: demo', `${capa} mcp --profile review`, `${hub.url}/mcp/review`]) {
      assert.ok(reviewText.includes(part), `${part} in ${reviewText}`);
    }
    const own = await page.locator('section.profiles tr[data-profile="default"]').textContent();
    assert.ok(own.includes('code') && own.includes(`${capa} mcp`) && own.includes(`${hub.url}/mcp`), own);
    await card('claude-code').getByRole('combobox', { name: 'Profile for Claude Code' }).selectOption('review');
    await card('claude-code').getByRole('button', { name: 'Connect Claude Code', exact: true }).click();
    await card('claude-code').locator('pre.diff').waitFor();
    const diff = await card('claude-code').locator('pre.diff').textContent();
    assert.ok(diff.includes('"--profile"') && diff.includes('"review"'), diff);
    await shot('clients-profile');
    await card('claude-code').getByRole('button', { name: 'Apply' }).click();
    await card('claude-code').locator('.hint', { hasText: 'over stdio, profile review' }).waitFor();
    const switched = JSON.parse(await read('claude-code')).mcpServers.capa;
    assert.deepEqual(withoutKey(switched), { command: capa, args: ['mcp', '--profile', 'review'] });
    // Switching profiles keeps the client's pairing: the same key, one paired client.
    const paired = await hub.apiJson('/api/clients/paired');
    assert.equal(paired.filter((c) => c.name === 'Claude Code').length, 1, JSON.stringify(paired));
    const listed = await hub.apiJson('/api/clients');
    assert.deepEqual(listed.profiles, ['review']);
    assert.equal(listed.clients.find((c) => c.id === 'claude-code').profile, 'review');
    const env = { ...sandbox.env, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    const out = spawnSync(NODE, [CLAUDE_CLI, 'mcp', 'list'], { env, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
    assert.equal(out.status, 0, `claude mcp list: ${out.stdout}\n${out.stderr}`);
    assert.match(out.stdout, new RegExp(`^capa: ${escape(capa)} mcp --profile review - [✓✔] Connected$`, 'm'), out.stdout);
  });

  it('lists the paired clients, pairs another with its key shown once, and turns a client’s forms off (issue 39)', async () => {
    await page.getByRole('link', { name: 'Clients' }).click();
    const section = page.locator('#paired-clients');
    await section.locator('tr[data-paired]').first().waitFor();
    // Claude Code was paired when Connect wrote its entry, and has been seen (`claude mcp list`).
    const claude = section.locator('tr', { hasText: 'Claude Code' });
    await claude.waitFor();
    assert.doesNotMatch(await claude.textContent(), /never/);
    await section.getByRole('textbox', { name: 'Name of the client to pair' }).fill('My script');
    await section.getByRole('button', { name: 'Pair a client' }).click();
    const shown = section.locator('.paired-key');
    await shown.waitFor();
    const key = (await shown.textContent()).match(/capa_client_[0-9a-f]{64}/)?.[0];
    assert.ok(key, await shown.textContent());
    const listed = await hub.apiJson('/api/clients/paired');
    assert.ok(listed.some((c) => c.name === 'My script' && c.forms), JSON.stringify(listed));
    assert.ok(!JSON.stringify(listed).includes(key), 'the listing shows no key');
    await shot('clients-paired');
    // The switch takes away: the client's forms no longer count.
    await section.getByRole('switch', { name: 'Forms of My script' }).click();
    await waitForForms(hub, 'My script', false);
  });
});

/** Polls the paired clients until `name`'s forms are `forms`. */
async function waitForForms(hub, name, forms) {
  for (let i = 0; i < 100; i++) {
    const listed = await hub.apiJson('/api/clients/paired');
    if (listed.find((c) => c.name === name)?.forms === forms) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${name}'s forms never became ${forms}`);
}
