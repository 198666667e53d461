// Prompts and resources of the sources, relayed (docs/relay.md): server-everything (stdio) behind
// the hub, the official TypeScript SDK client over Streamable HTTP and through `capa mcp`'s
// bridge to the running hub. Prompts are named under their source and got with their
// arguments; resources keep their URIs and read from the source that lists them, or through a
// template; an unknown URI is -32602 with the URI in `data`; a profile that does not serve the
// source, or a rule that denies it as a whole, shows none of it; completions of a prompt's
// arguments come from its source; a connected client hears when they may have changed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';

import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  connectHttp,
  connectStdio,
  closeClient,
  cleanup,
  waitFor,
  waitForSourcesReady,
} from './support.mjs';

const PROFILES = `
profiles:
  demo-only:
    toolExposure: direct
    sources: [demo]
  no-everything:
    toolExposure: code
    deny: ["everything.*"]
`;

describe('prompts and resources of the sources', () => {
  let sandbox;
  let configFile;
  let hub;
  const clients = [];
  const http = async (path = '/mcp') => {
    const client = await connectHttp(hub, { name: `relay-e2e${path.replaceAll('/', '-')}`, path });
    clients.push(client);
    return client;
  };

  before(async () => {
    sandbox = await makeSandbox('capa-relay-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      servers: [everythingStdio()],
    });
    await appendFile(configFile, PROFILES);
    hub = await startHub({ configFile, sandbox });
  });

  after(async () => {
    for (const client of clients) await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('lists the prompts under their source and gets one with its arguments', async () => {
    const client = await http();
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    assert.ok(names.includes('everything.simple-prompt'), names.join(', '));
    const args = prompts.find((p) => p.name === 'everything.args-prompt');
    assert.ok(args, names.join(', '));
    assert.deepEqual(args.arguments.map((a) => [a.name, a.required ?? false]), [['city', true], ['state', false]]);
    const got = await client.getPrompt({ name: 'everything.args-prompt', arguments: { city: 'Lyon', state: 'Rhône' } });
    assert.equal(got.messages[0].content.text, "What's weather in Lyon, Rhône?");
    await assert.rejects(client.getPrompt({ name: 'everything.no-such-prompt' }), /no-such-prompt|not found|Invalid/i);
    await assert.rejects(client.getPrompt({ name: 'nowhere' }), (e) => e.code === -32602);
  });

  it('completes a prompt argument from its source, with the context it was given', async () => {
    const client = await http();
    const department = await client.complete({
      ref: { type: 'ref/prompt', name: 'everything.completable-prompt' },
      argument: { name: 'department', value: 'S' },
    });
    assert.deepEqual(department.completion.values, ['Sales', 'Support']);
    const lead = await client.complete({
      ref: { type: 'ref/prompt', name: 'everything.completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Engineering' } },
    });
    assert.deepEqual(lead.completion.values, ['Alice', 'Bob', 'Charlie']);
    await assert.rejects(
      client.complete({ ref: { type: 'ref/prompt', name: 'elsewhere.p' }, argument: { name: 'x', value: '' } }),
      (e) => e.code === -32602,
    );
  });

  it('lists and reads resources, directly and through a template', async () => {
    const client = await http();
    const { resources } = await client.listResources();
    const doc = resources.find((r) => r.uri.startsWith('demo://resource/static/document/'));
    assert.ok(doc, JSON.stringify(resources.map((r) => r.uri)));
    const read = await client.readResource({ uri: doc.uri });
    assert.equal(read.contents[0].uri, doc.uri);
    assert.ok(read.contents[0].text.length > 0);
    const { resourceTemplates } = await client.listResourceTemplates();
    const template = resourceTemplates.find((t) => t.uriTemplate.startsWith('demo://resource/dynamic/text/'));
    assert.ok(template, JSON.stringify(resourceTemplates));
    const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
    assert.match(dynamic.contents[0].text, /3/);
  });

  it('answers an unknown URI with -32602 and the URI, and never asks a source about it', async () => {
    const client = await http();
    const uri = 'file:///etc/passwd';
    await assert.rejects(client.readResource({ uri }), (e) => {
      assert.equal(e.code, -32602, String(e));
      assert.equal(e.data?.uri, uri, JSON.stringify(e.data));
      return true;
    });
  });

  it('shows nothing of a source a profile does not serve or a rule denies', async () => {
    for (const path of ['/mcp/demo-only', '/mcp/no-everything']) {
      const client = await http(path);
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.filter((p) => p.name.startsWith('everything.')), [], path);
      const { resources } = await client.listResources();
      assert.deepEqual(resources.filter((r) => r.uri.startsWith('demo://')), [], path);
      await assert.rejects(client.getPrompt({ name: 'everything.simple-prompt' }), (e) => e.code === -32602);
    }
  });

  it('tells a connected client when the prompts and resources may have changed', async () => {
    const client = await http();
    const capabilities = client.getServerCapabilities();
    assert.equal(capabilities.prompts?.listChanged, true, JSON.stringify(capabilities));
    assert.equal(capabilities.resources?.listChanged, true, JSON.stringify(capabilities));
    const heard = { prompts: 0, resources: 0 };
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => heard.prompts++);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => heard.resources++);
    // A source that restarts goes away and comes back: its prompts with it.
    await hub.apiJson('/api/sources/everything/restart', { method: 'POST' });
    await waitFor('list_changed of prompts and resources', async () => heard.prompts > 0 && heard.resources > 0);
    await waitForSourcesReady(hub, ['everything']);
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'everything.simple-prompt'));
  });

  it('reads a resource from code with hub.resource, and refuses an unknown URI', async () => {
    const client = await http();
    const run = async (code) => (await client.callTool({ name: 'execute', arguments: { code } })).structuredContent;
    const read = await run(
      'const r = await hub.resource("demo://resource/static/document/architecture.md");\n' +
        'return { uri: r.contents[0].uri, size: r.contents[0].text.length };',
    );
    assert.equal(read.status, 'completed', JSON.stringify(read));
    assert.equal(read.result.uri, 'demo://resource/static/document/architecture.md');
    assert.ok(read.result.size > 0, JSON.stringify(read));
    const unknown = await run(
      'try { await hub.resource("file:///etc/passwd"); return "read"; } catch (e) { return [e.name, e.code, e.message]; }',
    );
    assert.equal(unknown.status, 'completed', JSON.stringify(unknown));
    assert.equal(unknown.result[0], 'ToolError', JSON.stringify(unknown));
    assert.equal(unknown.result[1], 'resource_not_found', JSON.stringify(unknown));
    const wrong = await run('try { await hub.resource(42); } catch (e) { return e.name; }');
    assert.equal(wrong.result, 'TypeError', JSON.stringify(wrong));
  });

  it('relays them through capa mcp to the running hub', async () => {
    const bridged = await connectStdio({ configFile, sandbox, name: 'relay-bridge' });
    clients.push(bridged);
    const { prompts } = await bridged.client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'everything.simple-prompt'), bridged.stderr());
    const got = await bridged.client.getPrompt({ name: 'everything.simple-prompt' });
    assert.match(got.messages[0].content.text, /simple prompt/);
    const { resources } = await bridged.client.listResources();
    assert.equal(new Set(resources.map((r) => r.uri)).size, resources.length, 'each URI once');
    await assert.rejects(bridged.client.readResource({ uri: 'nope://x' }), (e) => e.code === -32602 && e.data?.uri === 'nope://x');
    // The log level and subscriptions go through to the running hub, and its messages back.
    const messages = [];
    bridged.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => messages.push(n.params));
    await bridged.client.setLoggingLevel('info');
    await bridged.client.subscribeResource({ uri: 'demo://resource/static/document/architecture.md' });
    await waitFor('a log message through the bridge', async () => messages.some((m) => /Subscribe/.test(String(m.data))));
    assert.equal(messages.find((m) => /Subscribe/.test(String(m.data))).logger, 'everything');
    await bridged.client.unsubscribeResource({ uri: 'demo://resource/static/document/architecture.md' });
  });
});
