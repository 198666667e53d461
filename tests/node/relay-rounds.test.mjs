// A source of the 2026-07-28 era asks its client within the call (docs/relay.md): its answer is
// `input_required` with what it needs, under keys of its own, and it is called again with the
// answers. The source is tests/fixtures/asking_server.py (the official Python SDK 2.x, whose
// resolvers do exactly this), behind the hub in a direct profile. The hub asks the client whose
// call it is: a TypeScript SDK 2.x client (2026-07-28) in rounds of its own that keep the
// source's keys, a TypeScript SDK 1.x client (initialize era) with requests on its session; it
// tells the source what that client can answer, redacts what the source asks, names the source
// in the question, and in code mode, where nobody can be asked, the source is told so.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPV2,
} from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  waitForSourcesReady,
  runCapa,
} from './support.mjs';

const PYTHON = path.join(REPO_ROOT, 'tests', '.venv', 'bin', 'python');
const ASKING = path.join(REPO_ROOT, 'tests', 'fixtures', 'asking_server.py');
// Quotes and a backslash: redaction must match the value as the source writes it.
const SECRET = 'sk-rounds-"q"\\b-7731';

const PROFILE = `
profiles:
  asking:
    toolExposure: direct
    sources: [asking]
`;

const PARTY = { name: 'Ada', size: 4 };

describe('a 2026-07-28 source asking its client within the call', () => {
  let sandbox;
  let hub;
  let removeConnection;
  const closers = [];

  /** A TypeScript SDK 2.x client of the profile, speaking 2026-07-28. */
  const modern = async (capabilities, options = {}) => {
    const transport = new StreamableHTTPV2(new URL(hub.mcpUrl.replace(/\/mcp$/, '/mcp/asking')), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    const client = new ClientV2(
      { name: 'relay-rounds-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities, ...options },
    );
    await client.connect(transport);
    closers.push(() => client.close());
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    return client;
  };

  before(async () => {
    sandbox = await makeSandbox('capa-relay-rounds-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      servers: [{ id: 'asking', command: PYTHON, args: [ASKING], env: { SECRET: '${secret:secret}' } }],
    });
    await appendFile(configFile, PROFILE);
    // A secret the hub knows (it redacts what it knows): a connection's, in the keychain.
    const set = await runCapa(['--config', configFile, 'connections', 'set', 'asking', 'personal'], {
      env: sandbox.env,
      input: SECRET,
    });
    assert.equal(set.code, 0, set.stderr);
    removeConnection = () =>
      runCapa(['--config', configFile, 'connections', 'remove', 'asking', 'personal'], { env: sandbox.env });
    // The source asks the client's model too: off until a person allows it (issue 39).
    const allowed = await runCapa(['--config', configFile, 'sources', 'allow-sampling', 'asking'], {
      env: sandbox.env,
      terminal: true,
    });
    assert.equal(allowed.code, 0, allowed.stdout);
    hub = await startHub({ configFile, sandbox });
    await waitForSourcesReady(hub, ['asking']);
  });

  after(async () => {
    for (const close of closers) await close().catch(() => {});
    await hub?.stop();
    await removeConnection?.();
    await cleanup();
    await removeSandboxes();
  });

  it('negotiates 2026-07-28 with the source', async () => {
    const sources = await hub.apiJson('/api/sources');
    const asking = sources.find((s) => s.id === 'asking');
    assert.equal(asking.protocolVersion ?? asking.protocol_version, '2026-07-28', JSON.stringify(asking));
  });

  it('passes a source’s rounds to a 2026-07-28 client under the source’s keys', async () => {
    const client = await modern(
      { elicitation: { form: {} }, sampling: {}, roots: {} },
      { inputRequired: { autoFulfill: false } },
    );
    const call = (params) => client.callTool(params, { allowInputRequired: true });
    const first = await call({ name: 'asking.greet', arguments: {} });
    assert.equal(first.resultType, 'input_required', JSON.stringify(first));
    const requests = first.inputRequests;
    const methods = Object.values(requests).map((r) => r.method).sort();
    assert.deepEqual(methods, ['elicitation/create', 'roots/list', 'sampling/createMessage']);
    // The keys are the source's (its SDK names them after its resolvers), not the hub's.
    assert.ok(Object.keys(requests).every((k) => /ask_/.test(k)), Object.keys(requests).join(', '));
    const elicit = Object.values(requests).find((r) => r.method === 'elicitation/create');
    assert.match(elicit.params.message, /^asking asks: Whose table/);
    const answers = {};
    for (const [key, request] of Object.entries(requests)) {
      answers[key] = {
        'elicitation/create': { action: 'accept', content: PARTY },
        'sampling/createMessage': { role: 'assistant', content: { type: 'text', text: 'Good evening' }, model: 'm' },
        'roots/list': { roots: [{ uri: 'file:///home/ada/project', name: 'project' }] },
      }[request.method];
    }
    const done = await call({
      name: 'asking.greet',
      arguments: {},
      inputResponses: answers,
      requestState: first.requestState,
    });
    assert.equal(done.resultType ?? 'complete', 'complete', JSON.stringify(done));
    assert.match(done.content[0].text, /^Good evening Ada; roots: file:\/\/\/home\/ada\/project$/);
  });

  it('lets the TypeScript SDK 2.x answer every round of a tool and a prompt itself', async () => {
    const client = await modern({ elicitation: { form: {} } });
    const asked = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      const properties = Object.keys(request.params.requestedSchema.properties);
      return { action: 'accept', content: properties.includes('dish') ? { dish: 'soup' } : PARTY };
    });
    const booked = await client.callTool({ name: 'asking.book_table', arguments: {} });
    assert.equal(booked.isError ?? false, false, JSON.stringify(booked));
    assert.equal(booked.content[0].text, 'booked a table for 4, name Ada');
    // Two rounds: the dish is asked once the party is known.
    const dinner = await client.callTool({ name: 'asking.order_dinner', arguments: {} });
    assert.equal(dinner.content[0].text, 'Ada (4) eats soup', JSON.stringify(dinner));
    assert.ok(asked.includes('asking asks: What will Ada eat?'), asked.join(' | '));
    const plan = await client.getPrompt({ name: 'asking.plan', arguments: {} });
    assert.match(plan.messages[0].content.text, /Plan an evening for 4, name Ada/);
    // A resource's round (issue 43): asked as the source's, answered, read.
    const seating = await client.readResource({ uri: 'party://seating/window' });
    assert.equal(seating.contents[0].text, 'Seat 4 at window for Ada.', JSON.stringify(seating));
    assert.equal(asked.at(-1), 'asking asks: Who is being seated, and how many?');
  });

  it('tells the source what the client can answer, and passes its -32021 on as the error', async () => {
    // No elicitation declared: the source's SDK refuses the call (-32021) rather than ask, and
    // the client (which alone can change that) gets the source's refusal as a JSON-RPC error.
    const client = await modern({ sampling: {} });
    const refused = await client.callTool({ name: 'asking.book_table', arguments: {} }).then(
      (r) => ({ result: r }),
      (e) => ({ error: e }),
    );
    assert.equal(refused.error?.code, -32021, JSON.stringify(refused.result ?? refused.error));
    assert.ok(refused.error.data?.requiredCapabilities?.elicitation, JSON.stringify(refused.error.data));
  });

  it('asks a client of the initialize era on its session (TypeScript SDK 1.x)', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(hub.mcpUrl.replace(/\/mcp$/, '/mcp/asking')), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    const client = new Client({ name: 'relay-rounds-v1', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    await client.connect(transport);
    closers.push(() => client.close());
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Lin', size: 2 } };
    });
    const booked = await client.callTool({ name: 'asking.book_table', arguments: {} });
    assert.equal(booked.isError ?? false, false, JSON.stringify(booked));
    assert.equal(booked.content[0].text, 'booked a table for 2, name Lin');
    assert.deepEqual(asked, ['asking asks: Whose table, and for how many?']);
    // A prompt's round too.
    const plan = await client.getPrompt({ name: 'asking.plan', arguments: {} });
    assert.match(plan.messages[0].content.text, /Plan an evening for 2, name Lin/);
    assert.equal(asked.pop(), 'asking asks: Whose evening, and for how many?');
    // A resource's round, asked on the session as well.
    const seating = await client.readResource({ uri: 'party://seating/garden' });
    assert.equal(seating.contents[0].text, 'Seat 2 at garden for Lin.', JSON.stringify(seating));
    assert.equal(asked.pop(), 'asking asks: Who is being seated, and how many?');
    // What the source asks leaves the hub with its secret redacted.
    const leaked = await client.callTool({ name: 'asking.leak_in_question', arguments: {} });
    assert.equal(leaked.content[0].text, 'asked Lin', JSON.stringify(leaked));
    assert.match(asked[1], /^asking asks: Your key is /);
    assert.ok(!asked[1].includes(SECRET), asked[1]);
    assert.ok(!asked[1].includes('sk-rounds'), asked[1]);
  });

  it('gives code mode’s calls nothing to answer, and the source says what it wanted', async () => {
    const client = await connectHttp(hub, { name: 'relay-rounds-code' });
    closers.push(() => closeClient(client));
    const run = await client.callTool({
      name: 'execute',
      arguments: { code: 'return await asking.book_table({});' },
    });
    const text = JSON.stringify(run);
    assert.match(text, /elicitation/, text);
    assert.doesNotMatch(text, /booked a table/, text);
  });
});
