// What a source says and asks between answers, relayed to the client (docs/relay.md):
// server-everything (stdio) behind the hub, the official TypeScript SDK client over Streamable
// HTTP. A profile that serves everything alone, declared with `namespace: false`, shows its
// tools and prompts by their own names; the hub's own endpoint keeps `everything.`. The client's
// log level reaches the source and the source's log messages come back named after it; a
// subscription reaches the source and its updates come back; the source's sampling and
// elicitation requests during a call go to the client that made the call (the elicitation
// naming the source), and to a client that did not declare the capability they are refused.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPV2,
} from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  connectStdio,
  closeClient,
  cleanup,
  waitFor,
  waitForSourcesReady,
  runCapa,
} from './support.mjs';

const PROFILE = `
profiles:
  bare:
    toolExposure: direct
    sources: [everything]
`;

describe('a source talking to the client through the hub', () => {
  let sandbox;
  let hub;
  let configFile;
  const clients = [];
  /** A client of the `bare` profile; `capabilities` as it declares them. */
  const connect = async (capabilities = {}, path = '/mcp/bare') => {
    const url = hub.mcpUrl.replace(/\/mcp$/, path);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    const client = new Client({ name: 'relay-session', version: '1.0.0' }, { capabilities });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  before(async () => {
    sandbox = await makeSandbox('capa-relay-session-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      servers: [everythingStdio({ namespace: false })],
    });
    await appendFile(configFile, PROFILE);
    hub = await startHub({ configFile, sandbox });
    await waitForSourcesReady(hub, ['everything']);
  });

  after(async () => {
    for (const client of clients) await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('serves a source with namespace: false by its own names where it is served alone', async () => {
    const bare = await connect();
    const names = (await bare.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('echo'), names.join(', '));
    assert.ok(!names.some((n) => n.startsWith('everything.')), names.join(', '));
    const echoed = await bare.callTool({ name: 'echo', arguments: { message: 'bare' } });
    assert.equal(echoed.isError ?? false, false, JSON.stringify(echoed));
    assert.match(echoed.content[0].text, /bare/);
    const prompts = (await bare.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('simple-prompt'), prompts.join(', '));
    const got = await bare.getPrompt({ name: 'args-prompt', arguments: { city: 'Oslo' } });
    assert.match(got.messages[0].content.text, /Oslo/);
    // The hub's own endpoint serves two sources (demo and everything): names keep the prefix.
    const hubOwn = await connect({}, '/mcp');
    const own = (await hubOwn.listPrompts()).prompts.map((p) => p.name);
    assert.ok(own.includes('everything.simple-prompt'), own.join(', '));
  });

  it('refuses namespace: false where nothing serves the source alone, naming the fix', async () => {
    const file = await writeCapabilities(sandbox.configDir, {
      servers: [everythingStdio({ namespace: false })],
    }, 'shared.yaml');
    const checked = await runCapa(['--config', file, 'config', 'check'], { env: sandbox.env });
    assert.notEqual(checked.code, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout + checked.stderr, /namespace: false.*never serves it alone/s);
    assert.match(checked.stdout + checked.stderr, /sources: \[everything\]/);
  });

  it('passes the log level on and the source’s messages back, named after the source', async () => {
    const client = await connect();
    const messages = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
    await client.setLoggingLevel('debug');
    // everything logs each subscription it receives.
    await client.subscribeResource({ uri: 'demo://resource/static/document/architecture.md' });
    await waitFor('a log message of the source', async () => messages.some((m) => /Subscribe/.test(String(m.data))));
    const message = messages.find((m) => /Subscribe/.test(String(m.data)));
    assert.equal(message.level, 'info');
    // Served under its own names, the source's logger is its own (none); the hub's endpoint
    // names it.
    assert.equal(message.logger, undefined, JSON.stringify(message));
  });

  it('relays a subscription and the source’s updates of that resource', async () => {
    const client = await connect();
    const updated = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
    const uri = 'demo://resource/static/document/extension.md';
    await client.subscribeResource({ uri });
    // The tool starts everything's updates of its subscribers' resources (one at once).
    const toggled = await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.equal(toggled.isError ?? false, false, JSON.stringify(toggled));
    await waitFor('an update of the subscribed resource', async () => updated.includes(uri));
    await client.unsubscribeResource({ uri });
    await assert.rejects(client.subscribeResource({ uri: 'nowhere://x' }), (e) => e.code === -32602);
  });

  it('subscribes again on the source’s new connection when it restarts', async () => {
    const client = await connect();
    const updated = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
    const uri = 'demo://resource/static/document/instructions.md';
    await client.subscribeResource({ uri });
    await hub.apiJson('/api/sources/everything/restart', { method: 'POST' });
    await waitForSourcesReady(hub, ['everything']);
    // A fresh everything has its updates off: this turns them on (one at once, then every 5 s),
    // and it tells only of resources someone subscribed to on this connection.
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await waitFor('an update after the restart', async () => updated.includes(uri), { timeoutMs: 15000 });
    await client.unsubscribeResource({ uri });
  });

  it('refuses a source’s sampling until the person allows it, then labels it with the source (issue 39)', async () => {
    const client = await connect({ sampling: {} });
    const sampled = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      sampled.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model' };
    });
    const refused = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'before the yes', maxTokens: 20 },
    });
    assert.match(JSON.stringify(refused), /allow-sampling everything/, JSON.stringify(refused));
    assert.equal(sampled.length, 0, 'a source asked the model before the person allowed it');
    // Allowing is a person's act: the token is refused, a terminal is not.
    const viaToken = await hub.api('/api/sources/everything/sampling', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ allowed: true }),
    });
    assert.equal(viaToken.status, 403, await viaToken.text());
    const agent = await runCapa(['--config', configFile, 'sources', 'allow-sampling', 'everything'], { env: sandbox.env });
    assert.notEqual(agent.code, 0, 'sampling was allowed without a terminal');
    const person = await runCapa(['--config', configFile, 'sources', 'allow-sampling', 'everything'], { env: sandbox.env, terminal: true });
    assert.equal(person.code, 0, person.stdout);
    const listed = await hub.apiJson('/api/sources');
    assert.equal(listed.find((s) => s.id === 'everything').sampling_allowed, true);
    const allowed = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'after the yes', maxTokens: 20 },
    });
    assert.equal(allowed.isError ?? false, false, JSON.stringify(allowed));
    assert.match(sampled[0].systemPrompt, /^The MCP server "everything", a source connected through the Capabilities hub, asks/);
  });

  it('sends the source’s sampling and elicitation to the client of the call', async () => {
    const client = await connect({ sampling: {}, elicitation: { form: {} } });
    const sampled = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      sampled.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model' };
    });
    const elicited = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params);
      return { action: 'accept', content: { name: 'Ada', check: true } };
    });
    const sampling = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'hello from the test', maxTokens: 20 },
    });
    assert.equal(sampling.isError ?? false, false, JSON.stringify(sampling));
    assert.match(JSON.stringify(sampling.content), /a sampled answer/);
    assert.match(JSON.stringify(sampled[0].messages), /hello from the test/);
    // A secret the source puts in its request (here the hub's own token, which the model
    // passed it) reaches the client redacted.
    const leaky = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: `the token is ${hub.token}`, maxTokens: 20 },
    });
    assert.equal(leaky.isError ?? false, false, JSON.stringify(leaky));
    assert.match(JSON.stringify(sampled[1].messages), /the token is/);
    assert.ok(!JSON.stringify(sampled[1]).includes(hub.token), 'the token reached the client');
    const elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    assert.equal(elicitation.isError ?? false, false, JSON.stringify(elicitation));
    assert.match(JSON.stringify(elicitation.content), /Ada/);
    assert.match(elicited[0].message, /^everything asks: /);
    // The schema reaches the client whole (titled enums and defaults included).
    assert.equal(elicited[0].requestedSchema.properties.titledSingleSelectEnum.oneOf.length, 3);
  });

  it('sends them to a client behind capa mcp’s bridge, which says what it can answer', async () => {
    const bridged = await connectStdio({
      configFile,
      sandbox,
      name: 'relay-bridged',
      mcpArgs: ['--profile', 'bare'],
      capabilities: { sampling: {}, elicitation: { form: {} } },
    });
    clients.push(bridged);
    const { client } = bridged;
    const elicited = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params);
      return { action: 'accept', content: { name: 'Grace', check: true } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'an answer through the bridge' },
      model: 'test-model',
    }));
    const elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    assert.equal(elicitation.isError ?? false, false, JSON.stringify(elicitation));
    assert.match(JSON.stringify(elicitation.content), /Grace/);
    assert.match(elicited[0].message, /^everything asks: /);
    const sampling = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'through the bridge', maxTokens: 20 },
    });
    assert.match(JSON.stringify(sampling.content), /an answer through the bridge/, JSON.stringify(sampling));
    // A client behind the bridge that declared nothing is refused, as one on the hub's endpoint.
    const silent = await connectStdio({ configFile, sandbox, name: 'relay-bridged-silent', mcpArgs: ['--profile', 'bare'] });
    clients.push(silent);
    const refused = await silent.client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'nobody to ask', maxTokens: 5 },
    });
    assert.match(JSON.stringify(refused), /-32021|Missing required client capability/, JSON.stringify(refused));
  });

  it('refuses them with -32021 to a client that did not declare the capability', async () => {
    const client = await connect({});
    const result = await client.callTool({
      name: 'trigger-sampling-request',
      arguments: { prompt: 'nobody to ask', maxTokens: 5 },
    });
    // everything reports the refused request in its result.
    assert.match(JSON.stringify(result), /-32021|Missing required client capability/, JSON.stringify(result));
  });

  it('serves a 2026-07-28 client (TS SDK 2.x) the same, its source’s requests in input_required rounds', async () => {
    const connectV2 = async (capabilities) => {
      const transport = new StreamableHTTPV2(new URL(hub.mcpUrl.replace(/\/mcp$/, '/mcp/bare')), {
        requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
      });
      const modern = new ClientV2(
        { name: 'relay-session-v2', version: '1.0.0' },
        { versionNegotiation: { mode: 'auto' }, capabilities },
      );
      await modern.connect(transport);
      return modern;
    };
    const modern = await connectV2({ sampling: {}, elicitation: { form: {} } });
    const sampled = [];
    modern.setRequestHandler('sampling/createMessage', async (request) => {
      sampled.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'answered in a round' }, model: 'test-model' };
    });
    const elicited = [];
    modern.setRequestHandler('elicitation/create', async (request) => {
      elicited.push(request.params);
      return { action: 'accept', content: { name: 'Grace', check: true } };
    });
    const plain = await connectV2({});
    try {
      assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
      const prompts = (await modern.listPrompts()).prompts.map((p) => p.name);
      assert.ok(prompts.includes('args-prompt'), prompts.join(', '));
      const got = await modern.getPrompt({ name: 'args-prompt', arguments: { city: 'Rome' } });
      assert.match(got.messages[0].content.text, /Rome/);
      const read = await modern.readResource({ uri: 'demo://resource/dynamic/text/7' });
      assert.match(read.contents[0].text, /7/);
      const completed = await modern.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'S' },
      });
      assert.deepEqual(completed.completion.values, ['Sales', 'Support']);
      // The source asks mid-call; the SDK answers the input_required round and retries.
      const sampling = await modern.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'asked in a round', maxTokens: 5 },
      });
      assert.equal(sampling.isError ?? false, false, JSON.stringify(sampling));
      assert.match(JSON.stringify(sampling.content), /answered in a round/);
      assert.match(JSON.stringify(sampled[0].messages), /asked in a round/);
      const elicitation = await modern.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      assert.match(JSON.stringify(elicitation.content), /Grace/, JSON.stringify(elicitation));
      assert.match(elicited[0].message, /^everything asks: /);
      // A client that declared no sampling: the source is answered -32021 at once.
      const refused = await plain.callTool({
        name: 'trigger-sampling-request',
        arguments: { prompt: 'nobody to ask', maxTokens: 5 },
      });
      assert.match(JSON.stringify(refused), /-32021|Missing required client capability/, JSON.stringify(refused));
    } finally {
      await modern.close();
      await plain.close();
    }
  });

  it('refuses a requestState it did not issue, or one used already, with -32602', async () => {
    const transport = new StreamableHTTPV2(new URL(hub.mcpUrl.replace(/\/mcp$/, '/mcp/bare')), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    // Manual mode: the SDK hands the input_required round back instead of answering it.
    const modern = new ClientV2(
      { name: 'relay-session-state', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { sampling: {} }, inputRequired: { autoFulfill: false } },
    );
    await modern.connect(transport);
    try {
      const call = (params) =>
        modern.callTool(params, { allowInputRequired: true }).then(
          (r) => ({ result: r }),
          (e) => ({ error: e }),
        );
      const args = { prompt: 'state check', maxTokens: 5 };
      const first = await call({ name: 'trigger-sampling-request', arguments: args });
      assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
      const [key] = Object.keys(first.result.inputRequests);
      const answer = { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' };
      const state = first.result.requestState;
      const tampered = state.slice(0, -4) + (state.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const bad = await call({ name: 'trigger-sampling-request', arguments: args, inputResponses: { [key]: answer }, requestState: tampered });
      assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
      const good = await call({ name: 'trigger-sampling-request', arguments: args, inputResponses: { [key]: answer }, requestState: state });
      assert.equal(good.result?.resultType ?? 'complete', 'complete', JSON.stringify(good));
      const again = await call({ name: 'trigger-sampling-request', arguments: args, inputResponses: { [key]: answer }, requestState: state });
      assert.equal(again.error?.code, -32602, JSON.stringify(again));
    } finally {
      await modern.close();
    }
  });
});
