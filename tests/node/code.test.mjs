// Code mode (`toolExposure: code`) driven by the official TypeScript SDK client over `capa mcp`:
// `search` finds GitHub's create_issue from a person's phrasing, and `describe` returns
// TypeScript that the real compiler (tsc --strict) accepts. GitHub's tools come from the catalog
// fixture server (tests/fixtures/catalog-server.mjs) with their published definitions.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import {
  NODE,
  NODE_MODULES,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  connectStdio,
  closeClient,
  cleanup,
  resultText,
} from './support.mjs';

const CATALOG_SERVER = path.join(REPO_ROOT, 'tests', 'fixtures', 'catalog-server.mjs');
const TSC = path.join(NODE_MODULES, 'typescript', 'bin', 'tsc');

describe('code mode: search and describe', () => {
  let sandbox;
  let conn;
  let client;

  before(async () => {
    sandbox = await makeSandbox('capa-code-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      // GitHub's tools among 1,400 others (docker-registry and livemcpbench catalogs).
      servers: [
        { id: 'github', command: NODE, args: [CATALOG_SERVER, 'github'] },
        { id: 'registry', command: NODE, args: [CATALOG_SERVER, 'docker-registry'] },
        { id: 'live', command: NODE, args: [CATALOG_SERVER, 'livemcpbench'] },
      ],
    });
    conn = await connectStdio({ configFile, sandbox, name: 'e2e-code' });
    client = conn.client;
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists exactly the three code-mode tools with their annotations', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['search', 'describe', 'execute']);
    for (const tool of tools.slice(0, 2)) {
      assert.equal(tool.annotations.readOnlyHint, true);
      assert.equal(tool.annotations.idempotentHint, true);
    }
    const execute = tools[2];
    assert.equal(execute.annotations.readOnlyHint, false);
    assert.equal(execute.annotations.openWorldHint, true);
    assert.equal(execute.outputSchema.type, 'object');
  });

  it('executes code that calls tools in parallel and returns an envelope', async () => {
    const result = await client.callTool({
      name: 'execute',
      arguments: {
        code: [
          'const [me, repos] = await Promise.all([',
          '  github.get_me({}),',
          "  github.search_repositories({ query: 'language:rust' }),",
          ']);',
          'return { me: me.tool, repos: repos.arguments.query };',
        ].join('\n'),
      },
    });
    const envelope = result.structuredContent;
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${conn.stderr()}`);
    assert.deepEqual(envelope.result, { me: 'get_me', repos: 'language:rust' });
    assert.deepEqual(envelope.calls.map((c) => [c.address, c.ok]), [
      ['github.get_me', true],
      ['github.search_repositories', true],
    ]);
    assert.match(resultText(result), /^run run_[0-9a-f]{16} completed, 2 tool calls/);
  });

  it('finds github.create_issue for "open a bug report on a repo"', async () => {
    const result = await client.callTool({
      name: 'search',
      arguments: { query: 'open a bug report on a repo' },
    });
    const text = resultText(result);
    assert.notEqual(result.isError, true, text);
    const firstTool = text.split('\n').find((line) => line.startsWith('  '));
    assert.match(firstTool, /^ {2}github\.create_issue\(input: \{/, text);
  });

  it('describes it as TypeScript that tsc --strict compiles', async () => {
    const result = await client.callTool({
      name: 'describe',
      arguments: { targets: ['github.create_issue', 'github.search_issues'] },
    });
    const declarations = resultText(result);
    assert.notEqual(result.isError, true, declarations);
    assert.match(declarations, /declare const github: \{/);
    // A model's code against those declarations must type-check too.
    const usage = [
      'export {};',
      'async function main() {',
      '  await github.create_issue({ owner: "o", repo: "r", title: "Crash on start" }, { connection: "work" });',
      '}',
      'void main;',
    ].join('\n');
    const file = path.join(sandbox.root, 'described.ts');
    await writeFile(file, `${declarations}\n${usage}\n`);
    try {
      await promisify(execFile)(NODE, [
        // Bundler resolution: the @types packages other dev tools install (Vitest's
        // @types/chai 5 is ESM-only) must not break a compile that does not use them.
        TSC, '--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022',
        '--module', 'esnext', '--moduleResolution', 'bundler', file,
      ]);
    } catch (e) {
      assert.fail(`tsc rejected the declarations:\n${e.stdout}\n${declarations}`);
    }
  });

  it('answers bad input with a clear isError result', async () => {
    const tooMany = await client.callTool({
      name: 'describe',
      arguments: { targets: Array.from({ length: 11 }, (_, i) => `github.t${i}`) },
    });
    assert.equal(tooMany.isError, true);
    assert.match(resultText(tooMany), /1 to 10/);
    const unknown = await client.callTool({
      name: 'search',
      arguments: { query: 'issues', namespace: 'gihub' },
    });
    assert.equal(unknown.isError, true);
    assert.match(resultText(unknown), /unknown namespace `gihub`\. Did you mean github\?/);
  });
});

// A source that is not ready when new code runs: restarting after its first start failed, or
// waiting for a connection. The run waits for a source its code reads (a bounded time) rather
// than meeting a bare `ReferenceError`, and says which source and why when it stays missing.
describe('code mode: sources not ready when the code runs', () => {
  let sandbox;
  let conn;
  let client;

  before(async () => {
    sandbox = await makeSandbox('capa-code-unready-');
    const marker = path.join(sandbox.root, 'started-once');
    // First start: exits at once (the hub sees it down and retries). Second: two seconds late,
    // so the client's first execute comes while it is still starting.
    const flaky = [
      `if [ -e "$1" ]; then sleep 2; exec "$2" "$3" github; fi`,
      'touch "$1"; exit 1',
    ].join('\n');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code' },
      servers: [
        { id: 'flaky', command: 'sh', args: ['-c', flaky, 'sh', marker, NODE, CATALOG_SERVER] },
        {
          id: 'locked',
          command: NODE,
          args: [CATALOG_SERVER, 'github'],
          env: { TOKEN: '${secret:locked_token_never_set}' },
        },
      ],
    });
    conn = await connectStdio({ configFile, sandbox, name: 'e2e-code-unready' });
    client = conn.client;
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('waits for a source the code reads that is restarting, then runs', async () => {
    const result = await client.callTool({
      name: 'execute',
      arguments: { code: 'const me = await flaky.get_me({});\nreturn me.tool;' },
    });
    const envelope = result.structuredContent;
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${conn.stderr()}`);
    assert.equal(envelope.result, 'get_me');
  });

  it('pauses a run that calls a source waiting for its connection, whose tools are not known yet', async () => {
    const result = await client.callTool({
      name: 'execute',
      arguments: { code: 'return await locked.get_me({});' },
    });
    const envelope = result.structuredContent;
    assert.equal(envelope.status, 'awaiting_connection', JSON.stringify(envelope));
    assert.equal(envelope.pending.length, 1, JSON.stringify(envelope));
    assert.equal(envelope.pending[0].kind, 'connection');
    assert.equal(envelope.pending[0].address, 'locked.get_me');
    assert.match(envelope.pending[0].message, /capa connections set locked/);
    // Resumed before the person acted: it still waits.
    const again = await client.callTool({ name: 'execute', arguments: { resume: envelope.runId } });
    assert.equal(again.structuredContent.status, 'awaiting_connection', JSON.stringify(again.structuredContent));
    // `search` names the source and what it waits for.
    const found = await client.callTool({ name: 'search', arguments: { query: 'who am i' } });
    assert.match(found.content[0].text, /^locked {2}\(needs a connection; its tools are listed once the user adds it\./m);
  });
});
