// The Import page end to end in headless Chromium, with the real OS keychain
// (tests/support/with-keyring.sh) and a fake HOME holding real client files:
// - Claude Desktop's claude_desktop_config.json runs server-everything with a secret-looking
//   variable (a canary with quotes and backslashes) and has capa's own entry: the preview shows
//   the secret as hidden with its length and skips capa's entry; importing moves the value into the
//   keychain, the YAML says `${secret:…}`, the source becomes ready with its tools and its server
//   gets the value (everything.get-env), and the canary is in no API answer, page or hub log;
// - a VS Code mcp.json with comments and trailing commas (JSONC): its `everything` conflicts and
//   is offered as `everything-2`; its `${input:…}` header becomes a `${secret:…}` reference;
// - the curated list: "Everything (reference)" and "Filesystem" run through their real `npx -y …`
//   commands, which resolve offline because the hub runs in the repository, whose node_modules
//   holds both packages. GitHub's remote server cannot be reached from CI, so only its form and
//   what it writes (the YAML's header reference, the keychain field) are checked, not its tools;
// - Connections: a field no source refers to is saved with a warning saying where the reference
//   goes, and the source form offers that reference.
// Screenshots: docs/screenshots/ui-import.png, ui-import-vscode.png, ui-connections-warning.png.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
  CHROMIUM,
  uiMissing,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');

const skip = skipOrFail(uiMissing()) || skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);

// Quotes and backslashes: it must survive JSON, the keychain and the environment unchanged.
const CANARY = 'canary-"9b2e"\\path\\x-c0ffee-import';
const GITHUB_CANARY = 'ghp_canary\\"4411"-not-real';
// Forms the canary takes once escaped in JSON or YAML.
const CANARY_FORMS = [
  CANARY, JSON.stringify(CANARY).slice(1, -1), 'c0ffee-import',
  GITHUB_CANARY, JSON.stringify(GITHUB_CANARY).slice(1, -1), 'ghp_canary',
];

function assertNoCanary(text, where) {
  for (const form of CANARY_FORMS) assert.ok(!text.includes(form), `a secret (${form}) is in ${where}`);
}

describe('Import page in the browser', { skip }, () => {
  let sandbox;
  let home;
  let configFile;
  let hub;
  let browser;
  let page;
  const answers = []; // every /api/* answer body the page received

  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `ui-${name}.png`), fullPage: true });
  const go = async (hash) => {
    await page.goto(`${hub.url}/app/${hash}`);
    await page.locator('main h2').first().waitFor();
  };
  const api = (p, body) =>
    page.evaluate(
      async ([p, body]) => {
        const key = localStorage.getItem('capa.session');
        const res = await fetch(p, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { 'X-Capa-Csrf': key, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, text: await res.text() };
      },
      [p, body],
    );
  const sources = async () => (await hub.apiJson('/api/sources'));
  const waitReady = (id) =>
    waitFor(`${id} ready`, async () => {
      const s = (await sources()).find((x) => x.id === id);
      if (s?.state === 'down') throw Object.assign(new Error(`${id} is down: ${s.last_error}`), { fatal: true });
      return s?.state === 'ready' && s.tools > 0 ? s : null;
    }, { timeoutMs: 60000 });
  const pageText = async () => `${await page.content()}\n${await page.evaluate(() => document.body.innerText)}`;

  before(async () => {
    sandbox = await makeSandbox('capa-import-');
    home = path.join(sandbox.root, 'home');
    const opened = await fakeBrowser(sandbox.root);
    sandbox.env.CAPA_BROWSER = opened.script;
    delete sandbox.env.CAPA_NO_BROWSER;
    // The clients' files are looked for under this HOME only.
    sandbox.env.HOME = home;
    for (const name of ['XDG_CONFIG_HOME', 'CLAUDE_CONFIG_DIR', 'APPDATA', 'CODEX_HOME']) delete sandbox.env[name];

    const claudeDir = path.join(home, '.config', 'Claude');
    await mkdir(claudeDir, { recursive: true });
    await writeFile(
      path.join(claudeDir, 'claude_desktop_config.json'),
      JSON.stringify({
        mcpServers: {
          everything: {
            command: NODE,
            args: [EVERYTHING_JS, 'stdio'],
            env: { EVERYTHING_API_TOKEN: CANARY, LOG_LEVEL: 'info' },
            disabled: false,
          },
          capa: { command: CAPA_BIN, args: ['mcp'] },
        },
      }, null, 2),
    );
    const vscodeDir = path.join(home, '.config', 'Code', 'User');
    await mkdir(vscodeDir, { recursive: true });
    await writeFile(
      path.join(vscodeDir, 'mcp.json'),
      `{
  // VS Code's user MCP servers: JSON with comments and trailing commas.
  "inputs": [{ "type": "promptString", "id": "gh-token", "password": true }],
  "servers": {
    "everything": { "type": "stdio", "command": ${JSON.stringify(NODE)}, "args": [${JSON.stringify(EVERYTHING_JS)}, "stdio",], },
    /* a remote one */
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer \${input:gh-token}" } },
  },
}
`,
    );

    configFile = await writeCapabilities(sandbox.configDir, { options: { demo: false } });
    // The curated entries run `npx -y <package>`: from the repository, npx finds the packages in
    // its node_modules without the network.
    process.chdir(REPO_ROOT);
    hub = await startHub({ configFile, sandbox });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('dialog', (dialog) => dialog.accept());
    page.on('response', async (response) => {
      if (!response.url().includes('/api/')) return;
      try {
        answers.push(`${response.url()}\n${await response.text()}`);
      } catch {
        // An event stream or a page that went away.
      }
    });
    await mkdir(SHOTS, { recursive: true });

    const ran = await runCapa(['--config', configFile, 'ui'], { env: sandbox.env });
    assert.equal(ran.code, 0, `capa ui: ${ran.stderr}`);
    const argument = await waitFor('capa ui to open the browser', async () => (await opened.opened())[0]);
    await page.goto(await forwardedLink(argument));
    await page.locator('main h2').first().waitFor();
  });

  after(async () => {
    await browser?.close();
    await cleanup();
    await removeSandboxes();
  });

  it('refuses the token alone: reading a client file or adding sources needs a person', async () => {
    const res = await hub.api('/api/import/preview', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client: 'claude-desktop' }),
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /person_required/);
  });

  it('previews Claude Desktop\'s file, imports it with the secret moved into the keychain, and the source runs', async () => {
    await go('#/import');
    const claude = page.locator('tr[data-client="claude-desktop"]');
    await claude.getByText('found').waitFor();
    await page.locator('tr[data-client="cursor"]').getByText('not found').waitFor();
    await claude.getByRole('button', { name: 'Preview Claude Desktop' }).click();

    const row = page.locator('tr[data-server="everything"]');
    await row.waitFor();
    await row.getByText(`secret, hidden (${[...CANARY].length} characters)`).waitFor();
    await row.getByText('${secret:EVERYTHING_API_TOKEN}').waitFor();
    await row.getByText('Ignored: disabled').waitFor();
    await page.getByText("capa: this is capa's own entry").waitFor();
    assert.equal(await page.locator('tr[data-server="capa"]').count(), 0, "capa's own entry is not offered");
    assert.ok(await row.getByLabel('Move the secrets of everything into the keychain').isChecked(), 'moving is on by default');
    assertNoCanary(await pageText(), 'the preview page');
    await shot('import');

    const preview = await api('/api/import/preview', { client: 'claude-desktop' });
    assert.equal(preview.status, 200, preview.text);
    assertNoCanary(preview.text, 'the preview answer');
    const server = JSON.parse(preview.text).servers[0];
    assert.deepEqual(server.env.find((v) => v.key === 'EVERYTHING_API_TOKEN').secret.field, 'EVERYTHING_API_TOKEN');

    await page.getByRole('button', { name: 'Import selected' }).click();
    await page.getByText(/^Added everything: ready with \d+ tools\. Moved into the keychain: EVERYTHING_API_TOKEN\.$/).waitFor({ timeout: 30000 });
    const ready = await waitReady('everything');
    assert.ok(ready.tools > 5, `everything has tools: ${ready.tools}`);

    const yaml = await readFile(path.join(sandbox.configDir, 'capabilities.yaml'), 'utf8');
    assert.match(yaml, /"EVERYTHING_API_TOKEN": "\$\{secret:EVERYTHING_API_TOKEN\}"/, yaml);
    assert.match(yaml, /"LOG_LEVEL": "info"/, yaml);
    assertNoCanary(yaml, 'the capabilities file');
    const connections = await hub.apiJson('/api/connections');
    assert.deepEqual(
      connections.connections.map((c) => [c.source, c.name, c.fields]),
      [['everything', 'default', ['EVERYTHING_API_TOKEN']]],
    );

    // The server got the real value from the keychain; the hub's answer redacts it.
    const env = await hub.apiJson('/api/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address: 'everything.get-env', arguments: {} }),
    });
    const text = JSON.stringify(env);
    assert.match(text, /EVERYTHING_API_TOKEN/, text.slice(0, 400));
    assertNoCanary(text, 'a tool result');
    assert.match(text, /\[redacted\]/, 'the value reached the server and came back redacted');
  });

  it('reads VS Code\'s JSONC file, offers a renamed id for the conflict, and imports the picked server', async () => {
    await go('#/import');
    await page.getByLabel('Or a file').fill('~/.config/Code/User/mcp.json');
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    const everything = page.locator('tr[data-server="everything"]');
    await everything.getByText('a source `everything` exists already; this one would be added as `everything-2`').waitFor();
    assert.equal(await everything.getByLabel('Id for everything').inputValue(), 'everything-2');
    const github = page.locator('tr[data-server="github"]');
    await github.getByText('Bearer ${secret:gh-token}').waitFor();
    await github.getByText(/asks VS Code's input `gh-token`/).waitFor();
    await page.getByText('(VS Code)').waitFor();
    await shot('import-vscode');
    await github.getByLabel('Import github').uncheck();
    await page.getByRole('button', { name: 'Import selected' }).click();
    await page.getByText(/^Added everything-2: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });
    await waitReady('everything-2');
    assert.ok(!(await sources()).some((s) => s.id === 'github'), 'an unchecked server is not added');
  });

  it('adds well-known servers from the curated list with their real commands', async () => {
    await go('#/import');
    const reference = page.locator('form[data-well-known="everything"]');
    await reference.getByText('npx -y @modelcontextprotocol/server-everything').waitFor();
    await reference.getByLabel('Source id').fill('reference');
    await reference.getByRole('button', { name: 'Add Everything (reference)' }).click();
    await reference.getByText(/^Added reference: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });

    const fs = page.locator('form[data-well-known="filesystem"]');
    await fs.getByText('npx -y @modelcontextprotocol/server-filesystem <dir>').waitFor();
    // Every value is required, also for a request that skips the form.
    const refused = await api('/api/import/well-known', { key: 'filesystem', id: 'files', values: {}, secrets: {} });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /needs a value for Directory/);
    await fs.getByLabel('Source id').fill('files');
    await fs.getByLabel('Directory').fill(sandbox.filesDir);
    await fs.getByRole('button', { name: 'Add Filesystem' }).click();
    await fs.getByText(/^Added files: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });

    // GitHub's remote server: the token goes to the keychain, the file holds the reference.
    const gh = page.locator('form[data-well-known="github"]');
    await gh.getByLabel('GitHub token').fill(GITHUB_CANARY);
    await gh.getByRole('button', { name: 'Add GitHub' }).click();
    // No network to GitHub here: it settles as down (or still starting), and says so.
    await gh.getByText(/^Added github/).waitFor({ timeout: 30000 });
    assert.equal(await gh.getByLabel('GitHub token').inputValue(), '', 'the token field is cleared');
    await shot('import-well-known');

    await waitReady('reference');
    await waitReady('files');
    const yaml = await readFile(path.join(sandbox.configDir, 'capabilities.yaml'), 'utf8');
    assert.match(yaml, /command: "npx"\n\s+args: \["-y", "@modelcontextprotocol\/server-everything"\]/, yaml);
    assert.ok(yaml.includes(`args: ["-y", "@modelcontextprotocol/server-filesystem", ${JSON.stringify(sandbox.filesDir)}]`), yaml);
    assert.match(yaml, /"Authorization": "Bearer \$\{secret:GITHUB_TOKEN\}"/, yaml);
    assertNoCanary(yaml, 'the capabilities file');
    const connections = await hub.apiJson('/api/connections');
    assert.ok(connections.connections.some((c) => c.source === 'github' && c.fields.includes('GITHUB_TOKEN')), JSON.stringify(connections));
  });

  it('warns when a saved connection field is not referenced, and the source form offers the reference', async () => {
    await go('#/connections');
    await page.getByLabel('Source', { exact: true }).selectOption('everything-2');
    await page.getByLabel('Name', { exact: true }).fill('work');
    await page.getByLabel('Field', { exact: true }).fill('SPARE_TOKEN');
    await page.getByLabel('Secret', { exact: true }).fill('spare-secret-value');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByText('Saved everything-2/work.').waitFor();
    await page.getByText(/Saved, but source `everything-2` does not use it \(it refers to no secret\): write `\$\{secret:SPARE_TOKEN\}` in its Environment/).waitFor();
    await page.getByText('everything-2 does not use ${secret:SPARE_TOKEN}').waitFor();
    await shot('connections-warning');

    await go('#/sources');
    await page.locator('tr[data-source="everything-2"]').getByRole('button', { name: 'Edit everything-2' }).click();
    const offer = page.getByRole('button', { name: '${secret:SPARE_TOKEN}' });
    await offer.waitFor();
    await page.getByLabel('Environment').fill('');
    await offer.click();
    assert.equal(await page.getByLabel('Environment').inputValue(), 'SPARE_TOKEN=${secret:SPARE_TOKEN}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved everything-2: ready with \d+ tools\.$/).waitFor({ timeout: 30000 });
    await waitReady('everything-2');
    await go('#/connections');
    await page.getByRole('cell', { name: 'SPARE_TOKEN' }).waitFor();
    assert.equal(await page.getByText('everything-2 does not use ${secret:SPARE_TOKEN}').count(), 0, 'the warning is gone once referenced');
  });

  it('imports from the command line into the running hub: `capa sources import <file> --yes --json`', async () => {
    // A project's .mcp.json (Claude Code) with a secret; run without a terminal, as a script
    // would: the hub adds the source, which waits for a person's confirmation.
    const file = path.join(sandbox.root, '.mcp.json');
    await writeFile(file, JSON.stringify({
      mcpServers: { cli: { command: NODE, args: [EVERYTHING_JS, 'stdio'], env: { CLI_API_KEY: CANARY } } },
    }));
    const preview = await runCapa(['--config', configFile, 'sources', 'import', file, '--json'], { env: sandbox.env });
    assert.equal(preview.code, 0, preview.stderr);
    assertNoCanary(preview.stdout + preview.stderr, 'the command\'s preview');
    assert.equal(JSON.parse(preview.stdout).servers[0].env[0].secret.field, 'CLI_API_KEY');
    const ran = await runCapa(['--config', configFile, 'sources', 'import', file, '--yes', '--json'], { env: sandbox.env });
    assert.equal(ran.code, 0, ran.stderr);
    assertNoCanary(ran.stdout + ran.stderr, 'the command\'s output');
    assert.deepEqual(JSON.parse(ran.stdout).added, [{ name: 'cli', id: 'cli', movedSecrets: ['CLI_API_KEY'] }]);
    const cli = await waitFor('cli listed', async () => (await sources()).find((s) => s.id === 'cli'));
    assert.equal(cli.state, 'needs_confirmation', JSON.stringify(cli));
    const yaml = await readFile(path.join(sandbox.configDir, 'capabilities.yaml'), 'utf8');
    assert.match(yaml, /"CLI_API_KEY": "\$\{secret:CLI_API_KEY\}"/, yaml);
    assertNoCanary(yaml, 'the capabilities file');
  });

  it('never shows or logs a secret', async () => {
    for (const answer of answers) assertNoCanary(answer, `an API answer (${answer.split('\n')[0]})`);
    assert.ok(answers.length > 10, `answers seen: ${answers.length}`);
    for (const p of ['/api/sources', '/api/connections', '/api/import/clients']) {
      assertNoCanary(await (await hub.api(p)).text(), p);
    }
    assertNoCanary(hub.log(), 'the hub log');
  });
});
