// A run that needs a sign-in, with clients that declared URL-mode elicitation. An OAuth source
// `notes` (tests/support/oauth-server.mjs, `--auto-approve`) is signed in from a terminal first
// (`capa connections login`, the browser played by tests/support/oauth-browser.mjs in fetch
// mode), so its tools are listed; then the server revokes every token. The next `execute` call
// needs a new sign-in, and:
// - a TS v1 client (2025-11-25) gets `elicitation/create` with mode `url` mid-call;
// - a TS v2 client (2026-07-28) gets `input_required` with a URL elicitation, answers and retries.
// Either way the link is the hub's own one-time sign-in page (never the authorization server's
// URL, no token), following it signs in, and the same call returns the finished run. A client
// that declared no URL elicitation gets `awaiting_connection` with no link in the model's text.
// Before all that, a first call made before anyone signed in (the source's tools not known yet)
// gets the same link and finishes (issue 43).
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPV2,
} from '@modelcontextprotocol/client';

import {
  REPO_ROOT,
  startOAuthServer,
  cleanup,
  closeClient,
  connectHttp,
  makeSandbox,
  removeSandboxes,
  runCapa,
  startHub,
  stopProcess,
  waitFor,
  waitForSourcesReady,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const OAUTH_BROWSER = path.join(REPO_ROOT, 'tests', 'support', 'oauth-browser.mjs');
const CODE = 'return await notes.add({ a: 2, b: 3 })';

const skip = skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);


/** Plays the person's browser on a link: follows every redirect, as a browser would. */
async function follow(url) {
  const res = await fetch(url, { redirect: 'follow' });
  return { status: res.status, url: res.url, text: await res.text() };
}

function envelopeOf(result) {
  assert.ok(result.structuredContent, JSON.stringify(result));
  return result.structuredContent;
}

describe('a run that needs a sign-in, with URL elicitation', { skip }, () => {
  let server;
  let sandbox;
  let configFile;
  let hub;
  let client;

  before(async () => {
    server = await startOAuthServer(['--auto-approve']);
    sandbox = await makeSandbox('capa-oauth-url-');
    sandbox.env.CAPA_BROWSER = OAUTH_BROWSER;
    sandbox.env.OAUTH_BROWSER_MODE = 'fetch';
    configFile = path.join(sandbox.configDir, 'capabilities.yaml');
    await writeFile(
      configFile,
      [
        'options: {"demo": false, "toolExposure": "code"}',
        'servers:',
        '  - id: notes',
        '    type: mcp',
        `    def: { url: ${JSON.stringify(server.mcpUrl)}, oauth: true }`,
        '',
      ].join('\n'),
    );
    hub = await startHub({ configFile, sandbox, waitReady: false });
  });

  after(async () => {
    await hub?.stop();
    await stopProcess(server?.proc);
    await cleanup();
    await removeSandboxes();
  });

  afterEach(async () => {
    await closeClient(client);
    client = undefined;
  });

  /** A TS v1 client that declared URL elicitation, connected over HTTP; `onAsk` answers it. */
  async function v1Client(name, onAsk) {
    const transport = new StreamableHTTPClientTransport(new URL(hub.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    const v1 = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    v1.setRequestHandler(ElicitRequestSchema, onAsk);
    await v1.connect(transport);
    return v1;
  }

  /** Signs in from the terminal, then revokes every token at the server: the next call needs a sign-in. */
  async function signedInThenRevoked() {
    const login = await runCapa(['--config', configFile, 'connections', 'login', 'notes'], {
      env: sandbox.env,
      timeoutMs: 60000,
    });
    assert.equal(login.code, 0, `${login.stdout}${login.stderr}`);
    assert.match(login.stdout, /Signed in to `notes` as connection `personal`/);
    await waitForSourcesReady(hub, ['notes'], 30000);
    const revoked = await fetch(`${server.adminUrl}/revoke`, { method: 'POST' });
    assert.ok(revoked.ok);
  }

  // First, before anyone signed in: the source lists no tools yet, and the call is asked all the same.
  it('a first call, before any sign-in, gets the link too, and the same call finishes', async () => {
    const before = (await hub.apiJson('/api/sources')).find((s) => s.id === 'notes');
    assert.equal(before?.state, 'needs_connection', JSON.stringify(before));
    assert.equal(before.tools, 0, JSON.stringify(before));
    const asked = [];
    client = await v1Client('e2e-oauth-first', async (request) => {
      asked.push(request.params);
      const page = await follow(request.params.url);
      assert.match(page.text, /Signed in/);
      return { action: 'accept' };
    });
    const envelope = envelopeOf(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${hub.log()}`);
    assert.match(JSON.stringify(envelope.result), /5/);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].mode, 'url');
    assert.match(asked[0].message, /Sign in to notes to continue/);
  });

  it('a TS v1 client gets the hub sign-in link as elicitation/create (mode url); the call goes on', async () => {
    await signedInThenRevoked();
    const asked = [];
    client = await v1Client('e2e-oauth-url-v1', async (request) => {
      asked.push(request.params);
      const page = await follow(request.params.url);
      assert.equal(new URL(page.url).pathname, '/callback', JSON.stringify(page));
      assert.match(page.text, /Signed in/);
      return { action: 'accept' };
    });
    const envelope = envelopeOf(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${hub.log()}`);
    assert.match(JSON.stringify(envelope.result), /5/);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].mode, 'url');
    const link = new URL(asked[0].url);
    assert.equal(link.origin, new URL(hub.url).origin, 'the link is the hub’s own page');
    assert.match(link.pathname, /^\/sign-in\/[A-Za-z0-9_-]{20,}$/);
    assert.match(asked[0].message, /Sign in to notes to continue/);
    // The link is good once.
    const again = await fetch(asked[0].url, { redirect: 'manual' });
    assert.equal(again.status, 410);
  });

  it('a TS v2 client (2026-07-28) gets input_required with the link, answers, and the same call finishes', async () => {
    await signedInThenRevoked();
    const asked = [];
    const transport = new StreamableHTTPV2(new URL(hub.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    client = new ClientV2(
      { name: 'e2e-oauth-url-v2', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      const page = await follow(request.params.url);
      assert.match(page.text, /Signed in/);
      return { action: 'accept' };
    });
    await client.connect(transport);
    const envelope = envelopeOf(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${hub.log()}`);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].mode, 'url');
    assert.equal(new URL(asked[0].url).origin, new URL(hub.url).origin);
  });

  it('a client without URL elicitation gets awaiting_connection, and the model text has no link', async () => {
    await signedInThenRevoked();
    client = await connectHttp(hub, { name: 'e2e-oauth-plain' });
    const result = await client.callTool({ name: 'execute', arguments: { code: CODE } });
    const envelope = envelopeOf(result);
    assert.equal(envelope.status, 'awaiting_connection', JSON.stringify(envelope));
    assert.equal(envelope.pending[0].summary, 'Sign in to notes to continue (notes.add)');
    const text = JSON.stringify(result);
    assert.ok(!/https?:\/\//.test(text), `no address for the model: ${text}`);
    assert.match(envelope.pending[0].message, /capa connections login notes/);
  });
});
