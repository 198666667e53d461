// Named profiles (docs/profiles.md): one hub, several endpoints, each a mode over some of the
// sources, a stricter policy and lower limits. The official TypeScript SDK client reaches them
// over Streamable HTTP at /mcp/<name> and over stdio with `capa mcp --profile <name>`; GitHub's
// tools come from the catalog fixture server with their published definitions.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';

import {
  NODE,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  connectStdio,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  capaJson,
} from './support.mjs';

const CATALOG_SERVER = path.join(REPO_ROOT, 'tests', 'fixtures', 'catalog-server.mjs');

// `direct` is the spec's name for expose-all; `calc` lowers maxCalls and serves demo only.
const PROFILES = `
skills:
  - id: notes
    description: "Keep notes with the demo source"
    requires: ["@demo"]
  - id: triage
    description: "Triage GitHub issues"
    requires: ["@github"]
profiles:
  notes:
    toolExposure: direct
    sources: [demo]
    deny: ["demo.delete_*"]
    ask: ["demo.write_note"]
    description: "Notes only, nothing deleted"
  gh:
    toolExposure: search
    sources: [github]
  calc:
    sources: [demo]
    skills: [notes]
    limits: { maxCalls: 2 }
`;

describe('named profiles', () => {
  let sandbox;
  let configFile;
  let hub;
  const clients = [];

  const connect = async (profile) => {
    const client = await connectHttp(hub, { name: `e2e-profile-${profile}`, path: `/mcp/${profile}` });
    clients.push(client);
    return client;
  };

  before(async () => {
    sandbox = await makeSandbox('capa-profiles-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      servers: [{ id: 'github', command: NODE, args: [CATALOG_SERVER, 'github'] }],
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

  it('serves direct mode with the profile\'s sources only, its deny applied', async () => {
    const client = await connect('notes');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).filter((n) => n !== 'read_result').sort();
    assert.ok(tools.some((t) => t.name === 'read_result'), 'a direct profile reads large results back');
    assert.ok(names.length > 0, 'the demo tools are listed');
    assert.ok(names.every((n) => n.startsWith('demo.')), `only demo tools: ${names}`);
    assert.ok(!names.includes('demo.delete_note'), 'the profile denies delete_*');
    const sum = await client.callTool({ name: 'demo.add', arguments: { a: 2, b: 3 } });
    assert.notEqual(sum.isError, true, resultText(sum));
    assert.match(resultText(sum), /5/);
    const other = await client.callTool({ name: 'github.get_me', arguments: {} });
    assert.equal(other.isError, true);
    assert.match(resultText(other), /unknown tool/i);
    // The profile's `ask` makes write_note ask; a client without forms is refused, with the reason.
    const write = await client.callTool({ name: 'demo.write_note', arguments: { title: 't', text: 'x' } });
    assert.equal(write.isError, true, resultText(write));
    assert.match(resultText(write), /the profile "notes" says ask/);
  });

  it('serves search mode over GitHub only', async () => {
    const client = await connect('gh');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['call_tool', 'search']);
    // Skills over MCP: listing no skills, it serves those that need GitHub, not the demo's.
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r) => r.uri).sort(), ['skill://triage/SKILL.md']);
    const found = await client.callTool({ name: 'search', arguments: { query: 'add numbers issue' } });
    const text = resultText(found);
    assert.match(text, /github\./);
    assert.doesNotMatch(text, /demo\./, 'demo is not a source of this profile');
  });

  it('runs code with the profile\'s globals, skills and lowered limits', async () => {
    const client = await connect('calc');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search', 'describe', 'execute']);
    const run = async (code) =>
      (await client.callTool({ name: 'execute', arguments: { code } })).structuredContent;
    const two = await run('const a = await demo.add({a: 1, b: 2});\nconst b = await demo.add({a: 3, b: 4});\nreturn [a, b];');
    assert.equal(two.status, 'completed', JSON.stringify(two));
    const three = await run('for (let i = 0; i < 3; i++) await demo.add({a: i, b: 1});\nreturn 1;');
    assert.equal(three.status, 'failed', JSON.stringify(three));
    assert.equal(three.error.code, 'max_calls', JSON.stringify(three));
    const gh = await run('return typeof github;');
    assert.equal(gh.result, 'undefined', 'github is no global in this profile');
    const search = resultText(await client.callTool({ name: 'search', arguments: { query: 'create an issue' } }));
    assert.doesNotMatch(search, /github\./, search);
    assert.doesNotMatch(search, /hidden by your policy/, 'sources outside the profile are not counted as hidden');
    const overview = resultText(await client.callTool({ name: 'search', arguments: { query: '' } }));
    assert.match(overview, /^1 namespace/, overview);
    const described = await client.callTool({ name: 'describe', arguments: { targets: ['github.create_issue'] } });
    assert.equal(described.isError, true, resultText(described));
    const unknownNs = await client.callTool({ name: 'search', arguments: { query: 'x', namespace: 'github' } });
    assert.equal(unknownNs.isError, true);
    assert.match(resultText(unknownNs), /unknown namespace `github`/);
    // Skills: the profile serves `notes`, not `triage`.
    const skill = resultText(await client.callTool({ name: 'describe', arguments: { targets: ['skill:triage'] } }));
    assert.match(skill, /unknown target `skill:triage`.*Skills: skill:notes\./s, skill);
  });

  it('serves a profile with a trailing slash too', async () => {
    const client = await connect('gh/');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['call_tool', 'search']);
    const elsewhere = await client.callTool({ name: 'call_tool', arguments: { name: 'demo.add', data: { a: 1, b: 2 } } });
    assert.equal(elsewhere.isError, true);
    assert.match(resultText(elsewhere), /unknown tool `demo\.add`/, 'a source outside the profile is not there');
  });

  it('keeps the default profile at /mcp, with every source', async () => {
    const client = await connectHttp(hub, { name: 'e2e-profile-default' });
    clients.push(client);
    const found = resultText(await client.callTool({ name: 'search', arguments: { query: '' } }));
    assert.match(found, /github/);
    assert.match(found, /demo/);
  });

  it('answers an unknown profile with 404 and the names there are', async () => {
    const response = await hub.api('/mcp/nope', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(response.status, 404);
    const body = await response.json();
    assert.match(body.error.message, /no profile named `nope`.*calc, gh, notes/);
  });

  it('serves a profile over stdio with capa mcp --profile', async () => {
    const conn = await connectStdio({ configFile, sandbox, name: 'e2e-profile-stdio', mcpArgs: ['--profile', 'gh'] });
    try {
      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['call_tool', 'search']);
    } finally {
      await closeClient(conn);
    }
  });

  it('lists the profiles with capa profiles list, and refuses an unknown one on stdio', async () => {
    const { json } = await capaJson(['--config', configFile, 'profiles', 'list', '--json'], { env: sandbox.env });
    assert.deepEqual(json.map((p) => [p.name, p.mode, p.exposure, p.path]), [
      ['default', 'code', 'code', '/mcp'],
      ['calc', 'code', 'code', '/mcp/calc'],
      ['gh', 'search', 'search', '/mcp/gh'],
      ['notes', 'direct', 'expose-all', '/mcp/notes'],
    ]);
    const calc = json.find((p) => p.name === 'calc');
    assert.deepEqual(calc.limits, { maxCalls: 2 });
    assert.deepEqual(calc.stdioArgs, ['mcp', '--profile', 'calc']);
    // `capa clients connect --profile` writes only a profile the files declare.
    const home = path.join(sandbox.root, 'home');
    const clientsEnv = { ...sandbox.env, HOME: home };
    const unknown = await runCapa(['--config', configFile, 'clients', 'connect', 'cursor', '--profile', 'nope', '--dry-run'], { env: clientsEnv });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no profile named `nope`: the capabilities files declare calc, gh, notes/);
    const known = await runCapa(['--config', configFile, 'clients', 'connect', 'cursor', '--profile', 'gh', '--dry-run'], { env: clientsEnv });
    assert.equal(known.code, 0, known.stderr);
    assert.match(known.stdout, /"--profile",\n\+\s*"gh"/);
    // With no running hub for this file (a copy), the local hub refuses an unknown profile.
    const alone = await makeSandbox('capa-profiles-alone-');
    const copy = await writeCapabilities(alone.configDir, { options: { demo: true } });
    await appendFile(copy, 'profiles:\n  quiet:\n    toolExposure: none\n');
    const refused = await runCapa(['--config', copy, 'mcp', '--profile', 'nope'], { env: alone.env, input: '' });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /no profile named `nope`: the capabilities files declare quiet/);
  });

  it('refuses a profile that names an undeclared source, with the line and fix', async () => {
    const broken = await makeSandbox('capa-profiles-broken-');
    const file = await writeCapabilities(broken.configDir, {});
    await appendFile(file, 'profiles:\n  review:\n    sources: [github]\n  default:\n    toolExposure: search\n');
    const checked = await runCapa(['--config', file, 'config', 'check'], { env: broken.env });
    assert.notEqual(checked.code, 0);
    assert.match(checked.stderr, /capabilities\.yaml:4:\d+: profile `review` names source `github`, which no file declares/);
    assert.match(checked.stderr, /`default` is the hub's own profile/);
  });
});
