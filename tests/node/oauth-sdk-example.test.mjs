// The official TypeScript SDK's example server with OAuth (`simpleStreamableHttp.js --oauth`, its
// in-memory demo authorization server on a second port) as an upstream of the hub: the source is
// added with `oauth: true`, `capa connections login` signs in (the browser played by
// tests/support/oauth-browser.mjs in fetch mode: the demo server approves at once and redirects to
// the hub's loopback callback), the token set lands in the OS keychain, and a TS SDK client's
// `execute` calls the example's `greet` through the hub. Sign-in on first use (issue 43): a run
// started before anyone signed in, when the source's tools are not known yet, waits
// `awaiting_connection`, and the same run resumes to `completed` after the sign-in.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import {
  NODE,
  NODE_MODULES,
  REPO_ROOT,
  cleanup,
  closeClient,
  connectHttp,
  freePort,
  makeSandbox,
  removeSandboxes,
  runCapa,
  startHub,
  stopProcess,
  waitFor,
  waitForSourcesReady,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const EXAMPLE = path.join(
  NODE_MODULES,
  '@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js',
);
const OAUTH_BROWSER = path.join(REPO_ROOT, 'tests', 'support', 'oauth-browser.mjs');

const skip = skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);

describe('the TS SDK example server with --oauth, through the hub', { skip }, () => {
  let example;
  let sandbox;
  let configFile;
  let hub;
  let client;
  let mcpUrl;

  before(async () => {
    const [mcpPort, authPort] = [await freePort(), await freePort()];
    mcpUrl = `http://localhost:${mcpPort}/mcp`;
    example = spawn(NODE, [EXAMPLE, '--oauth'], {
      env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    example.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    example.stderr.setEncoding('utf8').on('data', (d) => (out += d));
    await waitFor('the example server to listen', () => {
      if (example.exitCode !== null) throw new Error(`the example exited ${example.exitCode}: ${out}`);
      return out.includes(`listening on port ${mcpPort}`) && out.includes(`listening on port ${authPort}`);
    });
    sandbox = await makeSandbox('capa-oauth-example-');
    sandbox.env.CAPA_BROWSER = OAUTH_BROWSER;
    sandbox.env.OAUTH_BROWSER_MODE = 'fetch';
    configFile = path.join(sandbox.configDir, 'capabilities.yaml');
    await writeFile(
      configFile,
      [
        'options: {"demo": false, "toolExposure": "code"}',
        'servers:',
        '  - id: example',
        '    type: mcp',
        `    def: { url: ${JSON.stringify(mcpUrl)}, oauth: true }`,
        '',
      ].join('\n'),
    );
    hub = await startHub({ configFile, sandbox, waitReady: false });
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    await stopProcess(example);
    await cleanup();
    await removeSandboxes();
  });

  it('pauses a first run for the sign-in, signs in from the terminal, resumes it, and serves the example tools', async () => {
    const before = (await hub.apiJson('/api/sources')).find((s) => s.id === 'example');
    assert.equal(before.state, 'needs_connection', JSON.stringify(before));
    assert.match(before.lastError ?? before.last_error ?? '', /Sign in to `example` to continue/);

    client = await connectHttp(hub, { name: 'e2e-oauth-example' });
    const found = await client.callTool({ name: 'search', arguments: { query: 'greet someone' } });
    assert.match(found.content[0].text, /^example {2}\(needs a sign-in; its tools are listed once the user signs in\./m);
    const first = await client.callTool({
      name: 'execute',
      arguments: { code: "const greeting = await example.greet({ name: 'Grace' });\nreturn greeting;" },
    });
    const paused = first.structuredContent;
    assert.equal(paused?.status, 'awaiting_connection', `${JSON.stringify(first)}\n${hub.log()}`);
    assert.deepEqual(
      paused.pending.map((p) => [p.kind, p.address, p.summary]),
      [['connection', 'example.greet', 'Sign in to example to continue (example.greet)']],
    );
    assert.match(paused.pending[0].message, /capa connections login example/);

    const login = await runCapa(['--config', configFile, 'connections', 'login', 'example'], {
      env: sandbox.env,
      timeoutMs: 60000,
    });
    assert.equal(login.code, 0, `${login.stdout}${login.stderr}`);
    assert.match(login.stdout, /Signed in to `example` as connection `personal` \(default\)/);
    // The authorization URL asks for PKCE S256 and names the MCP server as the resource.
    assert.match(login.stderr, /code_challenge_method=S256/);
    assert.match(login.stderr, new RegExp(`resource=${encodeURIComponent(mcpUrl).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

    const listed = await runCapa(['--config', configFile, 'connections', 'list', '--json'], { env: sandbox.env });
    const connections = JSON.parse(listed.stdout);
    assert.deepEqual(
      connections.map((c) => [c.source, c.name, c.default, c.fields]),
      [['example', 'personal', true, ['oauth']]],
    );

    await waitForSourcesReady(hub, ['example'], 30000);
    const resumed = await client.callTool({ name: 'execute', arguments: { resume: paused.runId } });
    assert.equal(resumed.structuredContent?.status, 'completed', `${JSON.stringify(resumed)}\n${hub.log()}`);
    assert.match(JSON.stringify(resumed.structuredContent.result), /Hello, Grace!/);

    const result = await client.callTool({
      name: 'execute',
      arguments: { code: "return await example.greet({ name: 'Ada' })" },
    });
    const envelope = result.structuredContent;
    assert.equal(envelope?.status, 'completed', `${JSON.stringify(result)}\n${hub.log()}`);
    assert.match(JSON.stringify(envelope.result), /Hello, Ada!/);
  });
});
