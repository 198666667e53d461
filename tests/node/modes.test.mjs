// The exposure modes (docs: tool-exposure.md) with the official TypeScript SDK 1.x client over
// `capa --config FILE mcp` (stdio), and once over `capa hub serve` (per-MCP-session state):
// - search: `search` + `call_tool`; matches become callable and accumulate; invalid `data`
//   answers the tool's full input schema;
// - on-demand: `setup_tools` + `call_tool`, with `@server` and with a skill;
// - none: an empty list, calls point to `capa sh`;
// - expose-all: the servers' `expose` policies plus tools required by active skills;
// - code: the three code-mode tools.
// Upstreams: server-everything, server-filesystem, and the catalog fixture server (for a tool whose
// schema has `additionalProperties: false`).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';

import {
  NODE,
  REPO_ROOT,
  EVERYTHING_JS,
  FILESYSTEM_JS,
  makeSandbox,
  removeSandboxes,
  connectStdio,
  connectHttp,
  startHub,
  closeClient,
  cleanup,
  resultText,
} from './support.mjs';

const CATALOG_SERVER = path.join(REPO_ROOT, 'tests', 'fixtures', 'catalog-server.mjs');
const ERROR_META = 'capabilities/error';
const HELLO = 'Hello from the modes test.\nSecond line.\n';

// ---------------------------------------------------------------------------------------------------
// Project files

const everything = (extra = {}) => ({
  id: 'everything',
  type: 'mcp',
  ...extra,
  def: { command: NODE, args: [EVERYTHING_JS, 'stdio'] },
});
const filesystem = (dir, extra = {}) => ({
  id: 'filesystem',
  type: 'mcp',
  ...extra,
  def: { command: NODE, args: [FILESYSTEM_JS, dir] },
});
// `web.bing_search({query, num_results?})`: its schema forbids unknown keys; calls are echoed.
const web = () => ({
  id: 'web',
  type: 'mcp',
  def: { command: NODE, args: [CATALOG_SERVER, 'livemcpbench', '--source', 'bing-cn-mcp'] },
});

/** A fresh sandbox with hello.txt in its files dir and a capabilities file (JSON is YAML). */
async function project(prefix, { mode, servers = [], skills, demo = false }) {
  const sandbox = await makeSandbox(prefix);
  const filesDir = await realpath(sandbox.filesDir);
  const hello = path.join(filesDir, 'hello.txt');
  await writeFile(hello, HELLO);
  const doc = { options: { toolExposure: mode, demo }, servers: servers.map((s) => (typeof s === 'function' ? s(filesDir) : s)) };
  if (skills) doc.skills = skills;
  const configFile = path.join(sandbox.configDir, 'capabilities.yaml');
  await writeFile(configFile, JSON.stringify(doc, null, 2) + '\n');
  return { sandbox, configFile, filesDir, hello };
}

// ---------------------------------------------------------------------------------------------------
// Reading answers

const errorOf = (result) => result._meta?.[ERROR_META];

function assertOk(result) {
  assert.notEqual(result.isError, true, `unexpected isError: ${resultText(result)}`);
  return resultText(result);
}

function assertErrorCode(result, code) {
  assert.equal(result.isError, true, `expected isError (${code}), got: ${resultText(result)}`);
  assert.equal(errorOf(result)?.code, code, `${JSON.stringify(result._meta)}\n${resultText(result)}`);
  return resultText(result);
}

/**
 * A search/setup_tools answer: {header, tools: [{id, line, description}]}. Each tool is a line
 * `<id>(<params>)` (plus `   [asks]`), optionally followed by an indented description line.
 */
function parseSignatures(text) {
  const lines = text.replace(/\n+$/, '').split('\n');
  const [header, ...rest] = lines;
  const tools = [];
  for (const line of rest) {
    if (/^\s/.test(line)) {
      assert.ok(tools.length, `description line before any signature:\n${text}`);
      assert.equal(tools.at(-1).description, undefined, `two description lines for one tool:\n${text}`);
      tools.at(-1).description = line.trim();
      continue;
    }
    const m = line.match(/^([A-Za-z0-9_-]+\.[^\s(]+)\((.*)\)( {3}\[asks\])?$/);
    assert.ok(m, `not a signature line: ${JSON.stringify(line)}\n${text}`);
    tools.push({ id: m[1], line, params: m[2], asks: Boolean(m[3]) });
  }
  return { header, tools, ids: tools.map((t) => t.id) };
}

const callTool = (client, name, data) =>
  client.callTool({ name: 'call_tool', arguments: data === undefined ? { name } : { name, data } });
const search = (client, args) => client.callTool({ name: 'search', arguments: args });
const setupTools = (client, names) => client.callTool({ name: 'setup_tools', arguments: { names } });

/** The pretty-printed schema in the text equals `_meta[...].inputSchema`, which is `expected`'s. */
function assertSchemaAnswer(result, name, expected) {
  const text = assertErrorCode(result, 'invalid_arguments');
  const schema = errorOf(result).inputSchema;
  assert.ok(schema && typeof schema === 'object', `no inputSchema in _meta: ${JSON.stringify(result._meta)}`);
  for (const [key, value] of Object.entries(expected)) {
    assert.deepEqual(schema[key], value, `${name}: inputSchema.${key}: ${JSON.stringify(schema)}`);
  }
  const pretty = JSON.stringify(schema, null, 2);
  assert.ok(pretty.includes('\n  "'), 'the schema pretty-prints over several lines');
  assert.ok(text.includes(pretty), `${name}: the text does not hold the full pretty input schema:\n${text}\n---\n${pretty}`);
  return text;
}

const GET_SUM_SCHEMA = {
  type: 'object',
  properties: {
    a: { type: 'number', description: 'First number' },
    b: { type: 'number', description: 'Second number' },
  },
  required: ['a', 'b'],
};
const SUM_2_3 = 'The sum of 2 and 3 is 5.';

// ---------------------------------------------------------------------------------------------------

describe('search mode (stdio)', () => {
  let p;
  let conn;
  let client;

  before(async () => {
    p = await project('capa-modes-search-', {
      mode: 'search',
      demo: true,
      servers: [everything(), (dir) => filesystem(dir), web()],
    });
    conn = await connectStdio({ configFile: p.configFile, sandbox: p.sandbox, name: 'e2e-modes-search' });
    client = conn.client;
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists exactly search and call_tool', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search', 'call_tool']);
  });

  it('refuses a tool no search has found yet with not_activated', async () => {
    const text = assertErrorCode(await callTool(client, 'everything.get-sum', { a: 2, b: 3 }), 'not_activated');
    assert.doesNotMatch(text, /The sum of/);
  });

  it('finds get-sum as a compact TypeScript signature with its description, then runs it', async () => {
    const found = await search(client, { query: 'sum of two numbers' });
    const { header, tools, ids } = parseSignatures(assertOk(found));
    assert.match(header, /^\d+ matching tools?, best first:$/);
    assert.equal(Number(header.match(/^\d+/)[0]), tools.length, header);
    assert.equal(ids[0], 'everything.get-sum', resultText(found));
    const sum = tools[0];
    assert.match(sum.params, /\ba: number\b.*\bb: number\b/, sum.line);
    assert.equal(sum.asks, false, sum.line);
    assert.match(sum.description ?? '', /Returns the sum of two numbers/, resultText(found));
    assert.ok(!ids.includes('everything.echo'), resultText(found));

    const ran = await callTool(client, 'everything.get-sum', { a: 2, b: 3 });
    assert.equal(assertOk(ran), SUM_2_3);
  });

  it('accumulates: a second search adds to the first, a never-found tool stays not_activated', async () => {
    const found = await search(client, { query: 'read text file' });
    const { ids } = parseSignatures(assertOk(found));
    assert.ok(ids.includes('filesystem.read_text_file'), resultText(found));
    assert.ok(!ids.includes('everything.get-sum') && !ids.includes('everything.echo'), resultText(found));

    const read = await callTool(client, 'filesystem.read_text_file', { path: p.hello });
    assert.equal(assertOk(read), HELLO);
    // Found by the first search, still callable after the second.
    assert.equal(assertOk(await callTool(client, 'everything.get-sum', { a: 2, b: 3 })), SUM_2_3);
    // Never in any answer.
    assertErrorCode(await callTool(client, 'everything.echo', { message: 'hi' }), 'not_activated');
  });

  it('marks tools the policy asks for with [asks]', async () => {
    const found = await search(client, { query: 'delete a note' });
    const { tools } = parseSignatures(assertOk(found));
    const del = tools.find((t) => t.id === 'demo.delete_note');
    assert.ok(del, resultText(found));
    assert.ok(del.line.endsWith('   [asks]'), del.line);
    const read = tools.find((t) => t.id === 'demo.read_note');
    if (read) assert.ok(!read.line.includes('[asks]'), read.line);
  });

  it('answers invalid data with the full input schema (missing, wrong type)', async () => {
    const missing = await callTool(client, 'everything.get-sum', { a: 2 });
    assertSchemaAnswer(missing, 'everything.get-sum', GET_SUM_SCHEMA);
    const wrongType = await callTool(client, 'everything.get-sum', { a: '2', b: 3 });
    assertSchemaAnswer(wrongType, 'everything.get-sum', GET_SUM_SCHEMA);
  });

  it('answers an unknown key with the schema where additionalProperties is false', async () => {
    const found = await search(client, { query: 'bing search' });
    assert.ok(parseSignatures(assertOk(found)).ids.includes('web.bing_search'), resultText(found));
    const ok = await callTool(client, 'web.bing_search', { query: 'rust' });
    assert.match(assertOk(ok), /rust/);
    const extra = await callTool(client, 'web.bing_search', { query: 'rust', bogus: 1 });
    const text = assertSchemaAnswer(extra, 'web.bing_search', {
      additionalProperties: false,
      required: ['query'],
    });
    assert.match(text, /bogus/);
  });

  it('adds the schema when the upstream itself refuses the arguments (an enum value)', async () => {
    const found = await search(client, { query: 'annotated message' });
    assert.ok(parseSignatures(assertOk(found)).ids.includes('everything.get-annotated-message'), resultText(found));
    const refused = await callTool(client, 'everything.get-annotated-message', { messageType: 'bogus' });
    const text = assertSchemaAnswer(refused, 'everything.get-annotated-message', { required: ['messageType'] });
    assert.match(text, /error.*success.*debug/s);
  });

  it('refuses setup_tools with a pointer to search', async () => {
    const result = await setupTools(client, ['@everything']);
    assert.equal(result.isError, true, resultText(result));
    assert.match(resultText(result), /search\(/);
  });

  it('limits: default 10, up to 50, an empty query lists alphabetically', async () => {
    const some = parseSignatures(assertOk(await search(client, { query: 'file' })));
    assert.ok(some.tools.length <= 10, some.header);
    const all = parseSignatures(assertOk(await search(client, { query: '' })));
    assert.equal(all.header, '10 tools, alphabetically:');
    assert.equal(all.tools.length, 10);
    assert.deepEqual(all.ids, [...all.ids].sort());
    const wide = parseSignatures(assertOk(await search(client, { query: '', limit: 50 })));
    const n = Number(wide.header.match(/^(\d+) tools, alphabetically:$/)?.[1]);
    assert.equal(n, wide.tools.length, wide.header);
    assert.ok(n > 20 && n <= 50, wide.header); // demo + everything + filesystem + web
    assert.deepEqual(wide.ids, [...wide.ids].sort());
    assert.deepEqual(wide.ids.slice(0, 10), all.ids);
    for (const id of ['everything.get-sum', 'filesystem.read_text_file', 'web.bing_search', 'demo.add']) {
      assert.ok(wide.ids.includes(id), `${id} missing from the empty-query listing`);
    }
    const one = parseSignatures(assertOk(await search(client, { query: 'sum', limit: 1 })));
    assert.equal(one.tools.length, 1, one.header);
    for (const limit of [0, 51]) {
      const refused = await search(client, { query: 'sum', limit });
      assert.equal(refused.isError, true, `limit ${limit}: ${resultText(refused)}`);
    }
    // Everything the empty query listed is callable now.
    assert.equal(assertOk(await callTool(client, 'everything.echo', { message: 'hi' })), 'Echo: hi');
  });
});

describe('search mode over HTTP: one set of found tools per MCP session', () => {
  let p;
  let hub;
  const clients = [];

  before(async () => {
    p = await project('capa-modes-search-http-', { mode: 'search', servers: [everything()] });
    hub = await startHub({ configFile: p.configFile, sandbox: p.sandbox });
  });

  after(async () => {
    for (const c of clients) await closeClient(c);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('keeps matches per session', async () => {
    const a = await connectHttp(hub, { name: 'e2e-modes-a' });
    clients.push(a);
    const b = await connectHttp(hub, { name: 'e2e-modes-b' });
    clients.push(b);
    assert.deepEqual((await a.listTools()).tools.map((t) => t.name), ['search', 'call_tool']);
    assertOk(await search(a, { query: 'sum' }));
    assert.equal(assertOk(await callTool(a, 'everything.get-sum', { a: 2, b: 3 })), SUM_2_3);
    assertErrorCode(await callTool(b, 'everything.get-sum', { a: 2, b: 3 }), 'not_activated');
    assert.equal(assertOk(await callTool(a, 'everything.get-sum', { a: 2, b: 3 })), SUM_2_3);
  });
});

describe('on-demand mode (stdio)', () => {
  let p;
  let conn;
  let client;

  before(async () => {
    p = await project('capa-modes-ondemand-', {
      mode: 'on-demand',
      servers: [everything(), (dir) => filesystem(dir)],
      skills: [
        { id: 'math', description: 'Sums', requires: ['everything.get-sum'] },
        { id: 'files', description: 'Reads the project files', requires: ['@filesystem'] },
      ],
    });
    conn = await connectStdio({ configFile: p.configFile, sandbox: p.sandbox, name: 'e2e-modes-ondemand' });
    client = conn.client;
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists exactly setup_tools and call_tool; setup_tools names the skills and servers', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['setup_tools', 'call_tool']);
    const description = tools[0].description;
    for (const part of ['math', 'Sums', 'files', '@everything', '@filesystem']) {
      assert.ok(description.includes(part), `setup_tools' description lacks ${part}: ${description}`);
    }
  });

  it('refuses tools before they are activated', async () => {
    assertErrorCode(await callTool(client, 'everything.get-sum', { a: 2, b: 3 }), 'not_activated');
  });

  it('activates a skill: only its tools become callable', async () => {
    const answer = await setupTools(client, ['math']);
    const { header, ids, tools } = parseSignatures(assertOk(answer));
    assert.match(header, /^Activated 1 tools?;/, resultText(answer));
    assert.deepEqual(ids, ['everything.get-sum']);
    assert.match(tools[0].params, /\ba: number\b.*\bb: number\b/, tools[0].line);
    assert.equal(assertOk(await callTool(client, 'everything.get-sum', { a: 2, b: 3 })), SUM_2_3);
    assertErrorCode(await callTool(client, 'everything.echo', { message: 'hi' }), 'not_activated');
    assertErrorCode(await callTool(client, 'filesystem.read_text_file', { path: p.hello }), 'not_activated');
  });

  it('activates a whole server with @everything', async () => {
    const answer = await setupTools(client, ['@everything']);
    const { header, ids } = parseSignatures(assertOk(answer));
    const n = Number(header.match(/^Activated (\d+) tools?;/)?.[1]);
    assert.equal(n, ids.length, resultText(answer));
    assert.ok(n >= 10, resultText(answer));
    assert.ok(ids.every((id) => id.startsWith('everything.')), resultText(answer));
    for (const id of ['everything.echo', 'everything.get-sum', 'everything.get-env']) {
      assert.ok(ids.includes(id), `${id} not activated:\n${resultText(answer)}`);
    }
    assert.equal(assertOk(await callTool(client, 'everything.echo', { message: 'hi' })), 'Echo: hi');
    assertErrorCode(await callTool(client, 'filesystem.read_text_file', { path: p.hello }), 'not_activated');
  });

  it('activates a skill requiring @filesystem, and reads a file', async () => {
    const { ids } = parseSignatures(assertOk(await setupTools(client, ['files'])));
    assert.ok(ids.includes('filesystem.read_text_file'), ids.join(', '));
    assert.ok(ids.every((id) => id.startsWith('filesystem.')), ids.join(', '));
    assert.equal(assertOk(await callTool(client, 'filesystem.read_text_file', { path: p.hello })), HELLO);
  });

  it('answers an unknown skill or server with unknown_skill', async () => {
    assertErrorCode(await setupTools(client, ['nope']), 'unknown_skill');
    assertErrorCode(await setupTools(client, ['@nowhere']), 'unknown_skill');
  });

  it('answers invalid data with the full input schema', async () => {
    assertSchemaAnswer(await callTool(client, 'everything.get-sum', { b: 3 }), 'everything.get-sum', GET_SUM_SCHEMA);
  });
});

describe('none mode (stdio)', () => {
  let conn;

  before(async () => {
    const p = await project('capa-modes-none-', { mode: 'none', demo: true, servers: [everything()] });
    conn = await connectStdio({ configFile: p.configFile, sandbox: p.sandbox, name: 'e2e-modes-none' });
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists no tools and points calls to capa sh', async () => {
    const { tools } = await conn.client.listTools();
    assert.deepEqual(tools, []);
    for (const [name, args] of [
      ['everything.get-sum', { a: 2, b: 3 }],
      ['demo.add', { a: 2, b: 3 }],
      ['call_tool', { name: 'everything.get-sum', data: { a: 2, b: 3 } }],
      ['search', { query: 'sum' }],
    ]) {
      const result = await conn.client.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name}: ${resultText(result)}`);
      assert.match(resultText(result), /capa sh/, name);
      assert.doesNotMatch(resultText(result), /The sum of|^5$/m, name);
    }
  });
});

describe('expose-all mode (stdio): expose policies plus tools required by active skills', () => {
  let conn;

  before(async () => {
    const p = await project('capa-modes-exposeall-', {
      mode: 'expose-all',
      servers: [
        everything({ expose: 'exactly', tools: ['echo'] }),
        (dir) => filesystem(dir, { expose: 'except', tools: ['write_file'] }),
      ],
      skills: [
        { id: 'math', description: 'Sums', requires: ['everything.get-sum'] },
        { id: 'env', description: 'Environment', requires: ['everything.get-env'], disabled: true },
      ],
    });
    conn = await connectStdio({ configFile: p.configFile, sandbox: p.sandbox, name: 'e2e-modes-exposeall' });
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists the exposed tools and the skill-required one', async () => {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(
      names.filter((n) => n.startsWith('everything.')).sort(),
      ['everything.echo', 'everything.get-sum'],
      names.join(', '),
    );
    assert.ok(names.includes('filesystem.read_text_file'), names.join(', '));
    assert.ok(!names.includes('filesystem.write_file'), names.join(', '));
    assert.ok(names.every((n) => n.startsWith('everything.') || n.startsWith('filesystem.')), names.join(', '));
    const sum = tools.find((t) => t.name === 'everything.get-sum');
    assert.deepEqual(sum.inputSchema.properties, GET_SUM_SCHEMA.properties);
    const result = await conn.client.callTool({ name: 'everything.get-sum', arguments: { a: 2, b: 3 } });
    assert.equal(assertOk(result), SUM_2_3);
  });
});

describe('code mode (stdio)', () => {
  let conn;

  before(async () => {
    const p = await project('capa-modes-code-', { mode: 'code', servers: [everything()] });
    conn = await connectStdio({ configFile: p.configFile, sandbox: p.sandbox, name: 'e2e-modes-code' });
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists exactly search, describe and execute', async () => {
    const { tools } = await conn.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search', 'describe', 'execute']);
  });
});
