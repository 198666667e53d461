// OpenAPI sources (docs/openapi.md): a real HTTP API (tests/fixtures/openapi_server.py, FastAPI,
// whose OpenAPI 3.1 document is written from its code) and GitHub's REST description (npm
// @octokit/openapi, OpenAPI 3.0, 1,200 operations) served as sources. Through the official
// TypeScript SDK client over Streamable HTTP: search finds operations, describe's declarations
// compile under tsc --strict, and calls from code are real HTTP requests with the connection's
// credentials (an API key with quotes and a backslash, a bearer token), typed HTTP errors,
// bounded size, time and redirects; no credential shows in results or logs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';

import {
  REPO_ROOT,
  NODE,
  NODE_MODULES,
  makeSandbox,
  removeSandboxes,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  runCapa,
  capaJson,
  waitFor,
  stopProcess,
  resultText,
} from './support.mjs';

const PYTHON = path.join(REPO_ROOT, 'tests', '.venv', 'bin', 'python');
const SERVER = path.join(REPO_ROOT, 'tests', 'fixtures', 'openapi_server.py');
const GITHUB = path.join(NODE_MODULES, '@octokit', 'openapi', 'generated', 'api.github.com.json');
const TSC = path.join(NODE_MODULES, 'typescript', 'bin', 'tsc');
// What openapi_server.py accepts; neither may appear anywhere the hub writes.
const API_KEY = 'key-"quoted"\\back';
const TOKEN = 'token-for-me';

/**
 * Appends describe answers the way a model reads them, each declaration once: a type an
 * earlier answer declared is left out of a later one (the TypeScript compiler refuses a
 * second `interface X` in a namespace with a different body).
 */
function joinAnswers(answers) {
  const declared = new Set();
  const out = [];
  for (const answer of answers) {
    let pending = [];
    for (const line of answer.split('\n')) {
      if (line.startsWith('interface CallOptions') && declared.has('CallOptions')) continue;
      if (line.startsWith('interface CallOptions')) declared.add('CallOptions');
      // Inside `declare namespace x {`: a declaration starts at one tab, its JSDoc before it.
      if (/^\t\/\*\*/.test(line) && pending.length === 0) {
        pending.push(line);
        if (!line.includes('*/')) pending.open = true;
        continue;
      }
      if (pending.open) {
        pending.push(line);
        if (line.includes('*/')) pending.open = false;
        continue;
      }
      const name = line.match(/^\t(?:interface|type) ([A-Za-z0-9_]+)/)?.[1];
      if (name) {
        pending.push(line);
        const block = [...pending];
        pending = [];
        const skip = declared.has(name);
        declared.add(name);
        // A multi-line interface runs to its closing `\t}`.
        block.skip = skip;
        out.push(block);
        if (!line.endsWith('{')) continue;
        block.multi = true;
        continue;
      }
      const last = out.at(-1);
      if (last?.multi && !last.closed) {
        last.push(line);
        if (line === '\t}') last.closed = true;
        continue;
      }
      out.push(...pending.map((l) => [l]), [line]);
      pending = [];
    }
  }
  return out.filter((block) => !block.skip).map((block) => block.join('\n')).join('\n');
}

async function execute(client, code) {
  const res = await client.callTool({ name: 'execute', arguments: { code } }, undefined, { timeout: 60_000 });
  return res.structuredContent;
}

/** Runs `code` and returns its value, failing with the envelope when the run did not complete. */
async function value(client, code) {
  const envelope = await execute(client, code);
  assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
  return envelope.result;
}

/** The ToolError a call throws, as plain data. */
const caught = (call) =>
  `try { await ${call}; return 'no error'; } catch (e) { return { name: e.name, code: e.code, status: e.status, retryable: e.retryable, hint: e.hint, message: e.message }; }`;

describe('OpenAPI sources', () => {
  let sandbox;
  let api;
  let port;
  let hub;
  let client;

  before(async () => {
    sandbox = await makeSandbox('capa-openapi-');
    const portFile = path.join(sandbox.root, 'port');
    api = spawn(PYTHON, [SERVER, portFile], { stdio: ['ignore', 'inherit', 'inherit'] });
    port = await waitFor('the API server', async () => existsSync(portFile) && (await readFile(portFile, 'utf8')));
    const configFile = path.join(sandbox.configDir, 'capabilities.yaml');
    await writeFile(
      configFile,
      [
        'options: { demo: false, toolExposure: code, upstreamTimeoutMs: 3000 }',
        'servers:',
        '  - id: tasks',
        '    type: openapi',
        '    def:',
        `      spec: http://127.0.0.1:${port}/openapi.json`,
        '      auth:',
        '        api_key: ${secret:key}',
        '        bearer: ${secret:token}',
        '  - id: github',
        '    type: openapi',
        '    def:',
        `      spec: ${JSON.stringify(GITHUB)}`,
        '      baseUrl: http://127.0.0.1:9',
        '  - id: nodoc',
        '    type: openapi',
        '    def: { spec: ./missing.yaml }',
        '',
      ].join('\n'),
    );
    for (const [field, secret] of [['key', API_KEY], ['token', TOKEN]]) {
      const set = await runCapa(['--config', configFile, 'connections', 'set', 'tasks', 'personal', '--field', field], {
        env: sandbox.env,
        input: secret,
      });
      assert.equal(set.code, 0, set.stderr);
    }
    hub = await startHub({ configFile, sandbox, waitReady: false });
    await waitFor('the OpenAPI sources', async () => {
      const sources = await hub.apiJson('/api/sources');
      const state = (id) => sources.find((s) => s.id === id)?.state;
      return state('tasks') === 'ready' && state('github') === 'ready' && state('nodoc') !== 'starting' && sources;
    }, { timeoutMs: 60_000 });
    client = await connectHttp(hub, { name: 'openapi-e2e' });
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    if (api) await stopProcess(api);
    await cleanup();
    await removeSandboxes();
  });

  it('lists each operation as a tool, and says why a document cannot be read', async () => {
    const { json: sources } = await capaJson(['--config', path.join(sandbox.configDir, 'capabilities.yaml'), 'sources', 'list', '--json'], { env: sandbox.env });
    const byId = Object.fromEntries(sources.map((s) => [s.id, s]));
    assert.equal(byId.tasks.tools, 13, JSON.stringify(byId.tasks));
    assert.ok(byId.github.tools > 1000, JSON.stringify(byId.github));
    assert.notEqual(byId.nodoc.state, 'ready');
    const why = JSON.stringify(byId.nodoc);
    assert.match(why, /missing\.yaml/, why);
    assert.match(why, /no such file/, why);
  });

  it('finds operations by what they do, among GitHub\'s', async () => {
    const found = resultText(
      await client.callTool({ name: 'search', arguments: { query: 'add a task to the list', namespace: 'tasks' } }),
    );
    assert.match(found.split('\n').find((l) => l.startsWith('  ')) ?? '', /tasks\.createTask/, found);
    const github = resultText(await client.callTool({ name: 'search', arguments: { query: 'list repository collaborators' } }));
    assert.match(github, /github\.repos_list-collaborators|repos_list_collaborators|reposListCollaborators/, github);
  });

  it('describes operations as TypeScript that tsc --strict compiles', async () => {
    const describe = async (targets) => {
      const result = await client.callTool({ name: 'describe', arguments: { targets } });
      const text = resultText(result);
      assert.notEqual(result.isError, true, text);
      return text;
    };
    const ours = await describe(['tasks.createTask', 'tasks.listTasks', 'tasks.getTree']);
    const theirs = await describe(['github.repos_list_collaborators', 'github.issues_create']);
    assert.match(ours, /declare const tasks: \{/);
    assert.match(ours, /createTask\(/, ours);
    // The recursive schema keeps its name.
    assert.match(ours, /children\?: tasks\.Node\[\]/, ours);
    assert.match(theirs, /declare const github: \{/);
    // GitHub's types are large: as a model would, describe the named types the first answer
    // lists as not shown (and those they name in turn) until the compiler finds all it needs.
    const answers = [ours, theirs];
    let declarations = joinAnswers(answers);
    const usage = [
      'export {};',
      'async function main() {',
      '  const created = await tasks.createTask({ body: { title: "t", tags: ["a"] } });',
      '  const id: number = created.id;',
      '  const open = await tasks.listTasks({ state: "open", tag: ["home"] });',
      '  const people = await github.repos_list_collaborators({ owner: "o", repo: "r" });',
      '  void id; void open.length; void people.length;',
      '}',
      'void main;',
    ].join('\n');
    const file = path.join(sandbox.root, 'openapi.ts');
    let problems = '';
    const described = new Set();
    for (let round = 0; round < 30; round++) {
      await writeFile(file, `${declarations}\n${usage}\n`);
      try {
        await promisify(execFile)(NODE, [
          TSC, '--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022',
          '--module', 'esnext', '--moduleResolution', 'bundler', file,
        ]);
        problems = '';
        break;
      } catch (e) {
        problems = e.stdout;
      }
      const named = [
        ...[...problems.matchAll(/has no exported member '([A-Za-z0-9_]+)'/g)].map((m) => `github.${m[1]}`),
        ...[...declarations.matchAll(/Not shown \(describe them on their own\): (.*)$/gm)].flatMap((m) =>
          m[1].split(', ').filter((t) => /^github\.[A-Za-z0-9_]+$/.test(t)),
        ),
      ];
      const missing = [...new Set(named)].filter((t) => !described.has(t));
      if (missing.length === 0) break;
      for (let i = 0; i < missing.length; i += 10) {
        const batch = missing.slice(i, i + 10);
        batch.forEach((t) => described.add(t));
        answers.push(await describe(batch));
        declarations = joinAnswers(answers);
      }
    }
    assert.equal(problems, '', `tsc rejected the declarations:\n${problems}`);
  });

  it('calls the API with the path, query, header, cookie, body and credentials in place', async () => {
    const listed = await value(client, 'return await tasks.listTasks({ tag: ["admin", "nothing"] });');
    assert.deepEqual(listed.map((t) => t.id), [2]);
    const created = await value(client, 'return await tasks.createTask({ body: { title: "Buy bread", tags: ["home"] } });');
    assert.equal(created.title, 'Buy bread');
    assert.equal(created.state, 'open');
    const me = await value(client, 'return await tasks.whoAmI();');
    assert.deepEqual(me, { user: 'ada' });
    const home = await value(client, 'return await tasks.home();');
    assert.equal(home.id, 1, 'a redirect within the API is followed');
  });

  it('escapes path values and sends header and cookie parameters', async () => {
    const found = resultText(await client.callTool({ name: 'search', arguments: { query: 'echo what arrived', namespace: 'tasks' } }));
    const name = found.match(/tasks\.([A-Za-z0-9_]+)\(/)?.[1];
    assert.ok(name, found);
    const echoed = await value(
      client,
      `return await tasks.${name}({ value: "a b?c#d", "x-trace": "t-1", session: "s-1" });`,
    );
    assert.equal(echoed.value, 'a b?c#d');
    assert.equal(echoed.raw_path, '/echo/a%20b%3Fc%23d');
    assert.equal(echoed.trace, 't-1');
    assert.equal(echoed.session, 's-1');
    assert.equal(echoed.key_sent, false, 'an operation without security gets no credentials');
    const dots = await value(client, caught(`tasks.${name}({ value: ".." })`));
    assert.match(dots.message, /cannot be "\.\."/, JSON.stringify(dots));
  });

  it('turns HTTP errors into typed ToolErrors', async () => {
    const missing = await value(client, caught('tasks.getTask({ task_id: 99 })'));
    assert.equal(missing.code, 'http_error', JSON.stringify(missing));
    assert.equal(missing.status, 404);
    assert.equal(missing.retryable, false);
    assert.match(missing.message, /no task 99/);
    const busy = await value(client, caught('tasks.busy()'));
    assert.equal(busy.status, 429, JSON.stringify(busy));
    assert.equal(busy.retryable, true);
    assert.match(busy.hint, /7 s/);
    const broken = await value(client, caught('tasks.broken()'));
    assert.equal(broken.status, 503, JSON.stringify(broken));
    assert.equal(broken.retryable, true);
    const unknown = await value(client, caught('tasks.getTask({ task_id: 1, nope: 2 })'));
    assert.match(unknown.message, /no argument `nope`/, JSON.stringify(unknown));
  });

  it('bounds time, size and redirects', async () => {
    const slow = await value(client, caught('tasks.slow({ seconds: 20 })'));
    assert.equal(slow.retryable, true, JSON.stringify(slow));
    const big = await value(client, caught('tasks.big({ megabytes: 5 })'));
    assert.match(big.message, /larger than the 3 MiB/, JSON.stringify(big));
    const away = await value(client, caught('tasks.away()'));
    assert.equal(away.status, 302, JSON.stringify(away));
    assert.match(away.message, /not followed/);
    // The hub and its source are still there.
    const again = await value(client, 'return (await tasks.getTask({ task_id: 1 })).title;');
    assert.equal(again, 'Water the plants');
  });

  it('asks a person before a DELETE, and never shows a credential', async () => {
    const envelope = await execute(client, 'return await tasks.deleteTask({ task_id: 1 });');
    assert.equal(envelope.status, 'awaiting_approval', JSON.stringify(envelope));
    const runs = await (await hub.api('/api/runs')).text();
    for (const secret of [API_KEY, TOKEN, JSON.stringify(API_KEY).slice(1, -1)]) {
      assert.ok(!hub.log().includes(secret), 'no credential in the hub log');
      assert.ok(!runs.includes(secret), 'no credential in the run history');
    }
  });
});
