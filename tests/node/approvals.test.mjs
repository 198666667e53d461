// Approvals in code mode with the official TypeScript clients. `demo.delete_note` is destructive, so
// by default a call to it asks a person:
// - TS v1 (`@modelcontextprotocol/sdk`, 2025-11-25) declaring elicitation: the hub sends a
//   server-initiated `elicitation/create` mid-call, and the call returns the finished run;
// - TS v2 (`@modelcontextprotocol/client`, version negotiation `auto` → 2026-07-28) with an
//   elicitation handler: the call answers `input_required`, the SDK fulfils it and retries;
// - TS v1 without elicitation: `awaiting_approval`, then `capa hub approve <runId>` (talking to the
//   running `capa hub serve`), then `execute({resume})`.
import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPV2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

import {
  CAPA_BIN,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  trackPid,
  resultText,
  runCapa,
} from './support.mjs';
import { pairClient } from './pairing-support.mjs';

const ADDRESS = 'demo.delete_note';
const MODERN = '2026-07-28';
const DECISIONS = {
  approve_once: 'Approve once',
  approve_run: 'Approve for the rest of this run',
  always_allow: `Always allow ${ADDRESS}`,
  deny: 'Deny',
};

// Writes a note (allowed) and deletes it (asks).
const DELETE_ONE = `
await demo.write_note({ title: "doomed", text: "bye" });
const deleted = await demo.delete_note({ title: "doomed" });
return { deleted, left: await demo.list_notes({}) };
`;
const DELETE_ONE_RESULT = { deleted: 'deleted note "doomed"', left: [] };

const DELETE_CAUGHT = `
await demo.write_note({ title: "doomed", text: "bye" });
try {
  await demo.delete_note({ title: "doomed" });
  return { ran: true };
} catch (e) {
  return { code: e.code, isToolError: e instanceof ToolError, left: await demo.list_notes({}) };
}
`;
const DENIED_RESULT = { code: 'denied', isToolError: true, left: ['doomed'] };

/** A sandbox with only the demo source, in code mode; no browser for approval pages. */
async function approvalsSandbox(prefix) {
  const sandbox = await makeSandbox(prefix);
  sandbox.env.CAPA_NO_BROWSER = '1';
  const configFile = await writeCapabilities(sandbox.configDir, {
    options: { demo: true, toolExposure: 'code' },
  });
  return { sandbox, configFile };
}

/** value -> title of the form's `decision` property (titled `oneOf`, or `enum` + `enumNames`). */
function schemaChoices(schema) {
  const decision = schema.properties.decision;
  assert.equal(decision.type, 'string', JSON.stringify(decision));
  if (decision.oneOf) return Object.fromEntries(decision.oneOf.map((c) => [c.const, c.title]));
  return Object.fromEntries(decision.enum.map((v, i) => [v, decision.enumNames?.[i]]));
}

function checkForm(params) {
  assert.ok(params.mode === undefined || params.mode === 'form', JSON.stringify(params));
  assert.ok(params.message.includes(ADDRESS), params.message);
  assert.ok(params.message.includes('"title"') && params.message.includes('"doomed"'), params.message);
  const schema = params.requestedSchema;
  assert.deepEqual(Object.keys(schema.properties), ['decision'], JSON.stringify(schema));
  assert.deepEqual(schema.required, ['decision'], JSON.stringify(schema));
  assert.deepEqual(schemaChoices(schema), DECISIONS, JSON.stringify(schema));
}

/** An elicitation handler answering each form with the next scripted reply; keeps what it was asked. */
function scripted(...replies) {
  const asked = [];
  const handler = async (request) => {
    asked.push(request.params);
    const reply = replies.shift();
    if (!reply) throw new Error(`asked more often than expected: ${request.params.message}`);
    return reply;
  };
  return { asked, handler };
}
const decide = (decision) => ({ action: 'accept', content: { decision } });

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return { envelope: result.structuredContent, text: resultText(result) };
}

/**
 * TS v1 client over `capa mcp`, declaring form elicitation and answering with `handler`; paired
 * first (its key in `CAPA_CLIENT_KEY`), since only a paired client's forms count.
 */
async function connectV1Eliciting({ configFile, sandbox }, handler) {
  const { key } = await pairClient(sandbox, 'e2e-approvals-v1');
  const transport = new StdioClientTransport({
    command: CAPA_BIN,
    args: ['--config', configFile, 'mcp'],
    env: { ...sandbox.env, CAPA_CLIENT_KEY: key },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name: 'e2e-approvals-v1', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, handler);
  await client.connect(transport);
  trackPid(transport.pid);
  return { client, transport, stderr: () => stderr };
}

/** TS v2 client (version negotiation `auto`) with an elicitation handler, over stdio or HTTP. */
async function connectV2Eliciting(transport, handler) {
  const client = new ClientV2(
    { name: 'e2e-approvals-v2', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', handler);
  await client.connect(transport);
  if (transport.pid) trackPid(transport.pid);
  return client;
}

async function closeV2(client, transport) {
  if (transport?.sessionId) {
    try {
      await transport.terminateSession();
    } catch {}
  }
  try {
    await client?.close();
  } catch {}
}

function pendingItems(stdout) {
  let data = JSON.parse(stdout);
  if (!Array.isArray(data)) {
    const lists = Object.values(data).filter(Array.isArray);
    assert.equal(lists.length, 1, `hub pending --json: ${stdout}`);
    data = lists[0];
  }
  return data;
}

after(async () => {
  await cleanup();
  await removeSandboxes();
});

describe('TS v1 client with elicitation: server-initiated elicitation/create', () => {
  let conn;
  afterEach(async () => {
    await closeClient(conn);
    conn = undefined;
  });

  it('approve_once completes the call and asks again in a new run', async () => {
    const setup = await approvalsSandbox('capa-apr-v1-');
    const { asked, handler } = scripted(decide('approve_once'), decide('approve_once'));
    conn = await connectV1Eliciting(setup, handler);

    const { envelope } = await execute(conn.client, { code: DELETE_ONE });
    assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
    assert.deepEqual(envelope.result, DELETE_ONE_RESULT);
    assert.equal(asked.length, 1);
    checkForm(asked[0]);

    const again = await execute(conn.client, { code: DELETE_ONE });
    assert.equal(again.envelope.status, 'completed', JSON.stringify(again.envelope));
    assert.deepEqual(again.envelope.result, DELETE_ONE_RESULT);
    assert.equal(asked.length, 2, 'approve_once must not carry over to a new run');
  });

  it('asks through `capa mcp`’s bridge when a hub runs, the form reaching the bridge’s client', async () => {
    const setup = await approvalsSandbox('capa-apr-bridge-');
    const hub = await startHub(setup);
    try {
      const { asked, handler } = scripted(decide('approve_once'));
      conn = await connectV1Eliciting(setup, handler);
      const { envelope } = await execute(conn.client, { code: DELETE_ONE });
      assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${hub.log()}`);
      assert.deepEqual(envelope.result, DELETE_ONE_RESULT);
      assert.equal(asked.length, 1);
      checkForm(asked[0]);
      // The running hub ran it (the bridge forwarded), and knows the client by its own name.
      const runs = await hub.apiJson('/api/runs?limit=1');
      assert.match(JSON.stringify(runs), /e2e-approvals-v1/, JSON.stringify(runs));
    } finally {
      await closeClient(conn);
      conn = undefined;
      await hub.stop();
    }
  });

  it('deny throws a ToolError with code "denied" in the guest', async () => {
    const setup = await approvalsSandbox('capa-apr-v1-');
    const { asked, handler } = scripted(decide('deny'), decide('deny'));
    conn = await connectV1Eliciting(setup, handler);

    const caught = await execute(conn.client, { code: DELETE_CAUGHT });
    assert.equal(caught.envelope.status, 'completed', JSON.stringify(caught.envelope));
    assert.deepEqual(caught.envelope.result, DENIED_RESULT);
    assert.equal(asked.length, 1);
    checkForm(asked[0]);

    const uncaught = await execute(conn.client, { code: DELETE_ONE });
    assert.equal(uncaught.envelope.status, 'failed', JSON.stringify(uncaught.envelope));
    assert.equal(uncaught.envelope.error.code, 'denied');
    assert.equal(asked.length, 2);
  });
});

describe('TS v2 client (2026-07-28) with an elicitation handler: input_required', () => {
  let client;
  let transport;
  let hub;
  afterEach(async () => {
    await closeV2(client, transport);
    client = transport = undefined;
    await hub?.stop();
    hub = undefined;
  });

  it('approve_once over stdio', async () => {
    const { sandbox, configFile } = await approvalsSandbox('capa-apr-v2-');
    const { asked, handler } = scripted(decide('approve_once'));
    const { key } = await pairClient(sandbox, 'e2e-approvals-v2');
    transport = new StdioV2({
      command: CAPA_BIN,
      args: ['--config', configFile, 'mcp'],
      env: { ...sandbox.env, CAPA_CLIENT_KEY: key },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    client = await connectV2Eliciting(transport, handler);
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);

    const { envelope } = await execute(client, { code: DELETE_ONE });
    assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
    assert.deepEqual(envelope.result, DELETE_ONE_RESULT);
    assert.equal(asked.length, 1);
    checkForm(asked[0]);
  });

  it('approve_once over Streamable HTTP (capa hub serve)', async () => {
    const { sandbox, configFile } = await approvalsSandbox('capa-apr-v2h-');
    hub = await startHub({ configFile, sandbox });
    const { asked, handler } = scripted(decide('approve_once'));
    // A paired client sends its own key instead of the hub's token.
    const { key } = await pairClient(sandbox, 'e2e-approvals-v2h');
    transport = new StreamableHTTPV2(new URL(hub.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    client = await connectV2Eliciting(transport, handler);
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);

    const { envelope } = await execute(client, { code: DELETE_ONE });
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${hub.log()}`);
    assert.deepEqual(envelope.result, DELETE_ONE_RESULT);
    assert.equal(asked.length, 1);
    checkForm(asked[0]);
  });
});

describe('TS v1 client without elicitation: awaiting_approval, capa hub approve, resume', () => {
  let hub;
  let client;
  afterEach(async () => {
    await closeClient(client);
    client = undefined;
    await hub?.stop();
    hub = undefined;
  });

  it('pauses, is approved from the terminal, and resumes to completed', async () => {
    const { sandbox, configFile } = await approvalsSandbox('capa-apr-cli-');
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'e2e-approvals-plain' });
    const capa = (...args) => runCapa(['--config', configFile, ...args], { env: sandbox.env });

    const { envelope, text } = await execute(client, { code: DELETE_ONE });
    assert.equal(envelope.status, 'awaiting_approval', JSON.stringify(envelope));
    const runId = envelope.runId;
    assert.match(runId, /^run_[0-9a-f]{16}$/);
    assert.equal(envelope.pending.length, 1, JSON.stringify(envelope));
    const [item] = envelope.pending;
    assert.equal(item.kind, 'approval');
    assert.equal(item.address, ADDRESS);
    assert.ok(item.id && item.summary && item.message, JSON.stringify(item));
    for (const shown of [text, JSON.stringify(envelope)]) {
      assert.doesNotMatch(shown, /https?:\/\//, 'a URL was handed to the model');
      assert.ok(!shown.includes(hub.token), 'the hub token was handed to the model');
    }

    // Until a person decides, resume returns the same pending envelope.
    const same = await execute(client, { resume: runId });
    assert.equal(same.envelope.status, 'awaiting_approval', JSON.stringify(same.envelope));
    assert.equal(same.envelope.runId, runId);
    assert.deepEqual(same.envelope.pending.map((p) => p.id), [item.id]);

    const pending = await capa('hub', 'pending', '--json');
    assert.equal(pending.code, 0, pending.stderr);
    const listed = pendingItems(pending.stdout);
    assert.equal(listed.length, 1, pending.stdout);
    assert.equal(listed[0].id, item.id);
    assert.equal(listed[0].runId, runId);
    assert.equal(listed[0].address, ADDRESS);
    assert.deepEqual(listed[0].preview, { title: 'doomed' });
    assert.ok(typeof listed[0].reason === 'string' && listed[0].reason, pending.stdout);

    // The agent's shell has no terminal: it cannot approve its own call.
    const refused = await capa('hub', 'approve', runId);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /interactive terminal/);

    const approved = await runCapa(['--config', configFile, 'hub', 'approve', runId], {
      env: sandbox.env,
      terminal: true,
    });
    assert.equal(approved.code, 0, `${approved.stdout}\n${hub.log()}`);
    // It says what it approved (the run).
    assert.ok(approved.stdout.includes(runId), approved.stdout);

    const done = await execute(client, { resume: runId });
    assert.equal(done.envelope.status, 'completed', `${JSON.stringify(done.envelope)}\n${hub.log()}`);
    assert.equal(done.envelope.runId, runId);
    assert.deepEqual(done.envelope.result, DELETE_ONE_RESULT);

    const afterwards = await capa('hub', 'pending', '--json');
    assert.equal(afterwards.code, 0, afterwards.stderr);
    assert.deepEqual(pendingItems(afterwards.stdout), []);
  });
});

describe('expose-all: a direct call of an asking tool', () => {
  let conn;
  afterEach(async () => {
    await closeClient(conn);
    conn = undefined;
  });

  /** The demo source in expose-all: every tool is its own MCP tool, no run to pause. */
  async function exposeAllSandbox() {
    const sandbox = await makeSandbox('capa-apr-direct-');
    sandbox.env.CAPA_NO_BROWSER = '1';
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: true, toolExposure: 'expose-all' },
    });
    return { sandbox, configFile };
  }

  it('asks a client with elicitation mid-call, and refuses on deny', async () => {
    const setup = await exposeAllSandbox();
    const { asked, handler } = scripted(decide('approve_once'), decide('deny'));
    conn = await connectV1Eliciting(setup, handler);
    await conn.client.callTool({ name: 'demo.write_note', arguments: { title: 'doomed', text: 'bye' } });

    const approved = await conn.client.callTool({ name: ADDRESS, arguments: { title: 'doomed' } });
    assert.notEqual(approved.isError, true, JSON.stringify(approved));
    assert.match(resultText(approved), /deleted note "doomed"/);
    assert.equal(asked.length, 1);
    checkForm(asked[0]);

    await conn.client.callTool({ name: 'demo.write_note', arguments: { title: 'doomed', text: 'bye' } });
    const denied = await conn.client.callTool({ name: ADDRESS, arguments: { title: 'doomed' } });
    assert.equal(denied.isError, true, JSON.stringify(denied));
    assert.equal(denied._meta?.['capabilities/error']?.code, 'denied', JSON.stringify(denied));
    const notes = await conn.client.callTool({ name: 'demo.list_notes', arguments: {} });
    assert.match(resultText(notes), /doomed/, 'the denied call did not run');
  });

  it('refuses a client without elicitation with approval_required', async () => {
    const { sandbox, configFile } = await exposeAllSandbox();
    const transport = new StdioClientTransport({
      command: CAPA_BIN,
      args: ['--config', configFile, 'mcp'],
      env: sandbox.env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e-approvals-plain', version: '1.0.0' });
    await client.connect(transport);
    trackPid(transport.pid);
    conn = { client, transport };
    const refused = await client.callTool({ name: ADDRESS, arguments: { title: 'nothing' } });
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused._meta?.['capabilities/error']?.code, 'approval_required', JSON.stringify(refused));
    assert.match(resultText(refused), /capa policy set demo\.delete_note allow/);
  });
});
