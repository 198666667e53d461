// Issue 39, case 1: only a person decides. Every local process can read the hub's token file, so
// a client that holds only the token gets no approval form whose answer counts — neither the
// 2025 era's `elicitation/create` nor 2026-07-28's `input_required` — and cannot loosen the
// policy. A client the person paired (`capa clients pair`, the app's Clients page) answers in its
// own form, but its "Always allow" is held until the person confirms it (docs/security.md,
// "Who may say yes").
import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPV2 } from '@modelcontextprotocol/client';

import {
  CAPA_BIN,
  cleanup,
  closeClient,
  makeSandbox,
  removeSandboxes,
  resultText,
  runCapa,
  startHub,
  trackPid,
  writeCapabilities,
} from './support.mjs';
import { pairClient } from './pairing-support.mjs';

const ADDRESS = 'demo.delete_note';
const WRITE = `await demo.write_note({ title: "doomed", text: "bye" }); return "written";`;
const DELETE = `return await demo.delete_note({ title: "doomed" });`;

/** The demo source in `mode`, served by `capa hub serve`; no browser for approval pages. */
async function hubWith(mode = 'code') {
  const sandbox = await makeSandbox('capa-pair-');
  sandbox.env.CAPA_NO_BROWSER = '1';
  const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: mode } });
  const hub = await startHub({ configFile, sandbox });
  return { sandbox, configFile, hub };
}

/** Every form this client is shown, answered "approve_once" (or `decision`). */
function answering(decision = 'approve_once') {
  const asked = [];
  const handler = async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision } };
  };
  return { asked, handler };
}

/** A TS SDK 1.x client over HTTP declaring form elicitation, with `bearer` (the hub's token or a client key). */
async function v1Http(hub, bearer, handler, name = 'e2e-pair-v1') {
  const transport = new StreamableHTTPClientTransport(new URL(hub.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, handler);
  await client.connect(transport);
  return client;
}

/** A TS SDK 2.x client (2026-07-28, `input_required`) over HTTP with `bearer`. */
async function v2Http(hub, bearer, handler) {
  const transport = new StreamableHTTPV2(new URL(hub.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  const client = new ClientV2(
    { name: 'e2e-pair-v2', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', handler);
  await client.connect(transport);
  return client;
}

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return result.structuredContent;
}

async function notes(hub) {
  const listed = await hub.apiJson('/api/call', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ address: 'demo.list_notes', arguments: {} }),
  });
  return JSON.stringify(listed);
}

after(async () => {
  await cleanup();
  await removeSandboxes();
});

describe('a client with only the hub token cannot approve (issue 39)', () => {
  let setup;
  let clients = [];
  afterEach(async () => {
    for (const c of clients) await closeClient(c);
    clients = [];
    await setup?.hub.stop();
    setup = undefined;
  });

  it('a TS v1 client that declares forms is shown no form, and its ask call stays paused', async () => {
    setup = await hubWith();
    const { asked, handler } = answering();
    const client = await v1Http(setup.hub, setup.hub.token, handler);
    clients.push(client);
    assert.equal((await execute(client, { code: WRITE })).status, 'completed');
    const paused = await execute(client, { code: DELETE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    assert.equal(asked.length, 0, 'a token-only client was asked in its own form');
    assert.match(await notes(setup.hub), /doomed/, 'the ask call ran without a person');
  });

  it('a TS v2 client (2026-07-28) gets no input_required for an approval', async () => {
    setup = await hubWith();
    const { asked, handler } = answering();
    const client = await v2Http(setup.hub, setup.hub.token, handler);
    clients.push(client);
    assert.equal((await execute(client, { code: WRITE })).status, 'completed');
    const paused = await execute(client, { code: DELETE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    assert.equal(asked.length, 0, 'a token-only 2026-07-28 client was sent an approval form');
    assert.match(await notes(setup.hub), /doomed/);
  });

  it('a paired client resuming another client’s paused run is shown no form for it', async () => {
    setup = await hubWith();
    const plain = await v1Http(setup.hub, setup.hub.token, answering().handler, 'e2e-pair-plain');
    clients.push(plain);
    await execute(plain, { code: WRITE });
    const paused = await execute(plain, { code: DELETE });
    assert.equal(paused.status, 'awaiting_approval');

    const { key } = await pairClient(setup.sandbox, 'other client');
    const { asked, handler } = answering();
    const other = await v1Http(setup.hub, key, handler, 'e2e-pair-other');
    clients.push(other);
    const resumed = await execute(other, { resume: paused.runId });
    assert.equal(resumed.status, 'awaiting_approval', JSON.stringify(resumed));
    assert.equal(asked.length, 0, 'another client was asked about a run it did not start');
    assert.match(await notes(setup.hub), /doomed/);
  });

  it('expose-all: a token-only client that declares forms is refused, and told to pair', async () => {
    setup = await hubWith('expose-all');
    const { asked, handler } = answering();
    const client = await v1Http(setup.hub, setup.hub.token, handler);
    clients.push(client);
    await client.callTool({ name: 'demo.write_note', arguments: { title: 'doomed', text: 'bye' } });
    const refused = await client.callTool({ name: ADDRESS, arguments: { title: 'doomed' } });
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused._meta?.['capabilities/error']?.code, 'approval_required', JSON.stringify(refused));
    assert.match(resultText(refused), /not paired/);
    assert.equal(asked.length, 0);
    assert.match(await notes(setup.hub), /doomed/);
  });
});

describe('paired clients (issue 39)', () => {
  let setup;
  let clients = [];
  afterEach(async () => {
    for (const c of clients) await closeClient(c);
    clients = [];
    await setup?.hub.stop();
    setup = undefined;
  });

  it('a paired client’s form decides its call; its always_allow is held, so the token still gets no run', async () => {
    setup = await hubWith();
    const { key } = await pairClient(setup.sandbox, 'e2e paired');
    const { asked, handler } = answering('always_allow');
    const client = await v1Http(setup.hub, key, handler, 'e2e-pair-paired');
    clients.push(client);
    await execute(client, { code: WRITE });
    const done = await execute(client, { code: DELETE });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(asked.length, 1);

    // The rule is in the file, but held: a process with the token still needs a person.
    const { held } = await setup.hub.apiJson('/api/policy');
    assert.match(JSON.stringify(held), /demo\.delete_note/, JSON.stringify(held));
    await execute(client, { code: WRITE });
    const direct = await setup.hub.apiJson('/api/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: ADDRESS, arguments: { title: 'doomed' } }),
    });
    assert.equal(direct.error?.code, 'approval_required', JSON.stringify(direct));
    assert.match(await notes(setup.hub), /doomed/);
  });

  it('over stdio, `capa mcp` passes CAPA_CLIENT_KEY to the running hub; forms off makes the client ask the app again', async () => {
    setup = await hubWith();
    const paired = await pairClient(setup.sandbox, 'e2e stdio');
    const { asked, handler } = answering();
    const transport = new StdioClientTransport({
      command: CAPA_BIN,
      args: ['--config', setup.configFile, 'mcp'],
      env: { ...setup.sandbox.env, CAPA_CLIENT_KEY: paired.key },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    const client = new Client({ name: 'e2e-pair-stdio', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, handler);
    await client.connect(transport);
    trackPid(transport.pid);
    clients.push({ client, transport });
    await execute(client, { code: WRITE });
    assert.equal((await execute(client, { code: DELETE })).status, 'completed');
    assert.equal(asked.length, 1);

    // Turning forms off takes away; no terminal needed.
    const off = await runCapa(['clients', 'forms', paired.id, 'off'], { env: setup.sandbox.env });
    assert.equal(off.code, 0, off.stderr);
    await execute(client, { code: WRITE });
    const paused = await execute(client, { code: DELETE });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    assert.equal(asked.length, 1, 'a client whose forms were turned off was asked');
    // Turning them on again is a person's act.
    const on = await runCapa(['clients', 'forms', paired.id, 'on'], { env: setup.sandbox.env });
    assert.notEqual(on.code, 0, 'forms were turned on without a terminal');
    assert.match(on.stderr, /interactive terminal/);
  });

  it('`capa clients connect` pairs the client at a terminal (its key in the file, masked on screen), and not without one', async () => {
    setup = await hubWith();
    const env = { ...setup.sandbox.env, HOME: path.join(setup.sandbox.root, 'home') };
    for (const name of ['XDG_CONFIG_HOME', 'CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'APPDATA']) delete env[name];
    const cursorFile = path.join(env.HOME, '.cursor', 'mcp.json');
    await mkdir(path.dirname(cursorFile), { recursive: true });
    await writeFile(cursorFile, '{ "mcpServers": {} }\n');

    const atTerminal = await runCapa(['clients', 'connect', 'cursor', '--yes'], { env, terminal: true });
    assert.equal(atTerminal.code, 0, atTerminal.stdout);
    assert.match(atTerminal.stdout, /connected and paired/);
    const entry = JSON.parse(await readFile(cursorFile, 'utf8')).mcpServers.capa;
    const key = entry.env?.CAPA_CLIENT_KEY ?? '';
    assert.match(key, /^capa_client_[0-9a-f]{64}$/, JSON.stringify(entry));
    assert.ok(!atTerminal.stdout.includes(key), 'the key was printed');
    assert.match(atTerminal.stdout, /capa_client_… \(this client's own key\)/);
    const listed = await setup.hub.apiJson('/api/clients/paired');
    assert.deepEqual(listed.map((c) => c.name), ['Cursor']);

    const desktopFile = path.join(env.HOME, '.config', 'Claude', 'claude_desktop_config.json');
    await mkdir(path.dirname(desktopFile), { recursive: true });
    await writeFile(desktopFile, '{}\n');
    const scripted = await runCapa(['clients', 'connect', 'claude-desktop', '--yes'], { env });
    assert.equal(scripted.code, 0, scripted.stderr);
    assert.match(scripted.stdout, /connected, not paired/);
    assert.equal(JSON.parse(await readFile(desktopFile, 'utf8')).mcpServers.capa.env, undefined);
    assert.equal((await setup.hub.apiJson('/api/clients/paired')).length, 1, 'a client was paired without a terminal');
  });

  it('pairing needs a person; an unknown or removed key opens nothing', async () => {
    setup = await hubWith();
    const agent = await runCapa(['clients', 'pair', 'sneaky'], { env: setup.sandbox.env });
    assert.notEqual(agent.code, 0, 'a client was paired without a terminal');
    assert.match(agent.stderr, /interactive terminal/);
    const viaToken = await setup.hub.api('/api/clients/paired', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sneaky' }),
    });
    assert.equal(viaToken.status, 403, await viaToken.text());

    const paired = await pairClient(setup.sandbox, 'short-lived');
    const listed = await setup.hub.apiJson('/api/clients/paired');
    assert.deepEqual(listed.map((c) => [c.id, c.forms]), [[paired.id, true]]);
    assert.doesNotMatch(JSON.stringify(listed), /capa_client_/, 'a listing showed a key');
    const unpair = await runCapa(['clients', 'unpair', paired.id], { env: setup.sandbox.env });
    assert.equal(unpair.code, 0, unpair.stderr);
    for (const key of [paired.key, `capa_client_${'0'.repeat(64)}`]) {
      const res = await fetch(setup.hub.mcpUrl, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(res.status, 401, `${key.slice(0, 16)}…: ${await res.text()}`);
    }
    // A client key opens the MCP endpoint only, never the API.
    const again = await pairClient(setup.sandbox, 'mcp only');
    const api = await fetch(`${setup.hub.url}/api/runs`, { headers: { Authorization: `Bearer ${again.key}` } });
    assert.equal(api.status, 401);
  });
});
