// A source's tasks (SEP-2663, the Tasks extension) relayed to a 2026-07-28 client (docs/relay.md,
// "Tasks"): the source is tests/fixtures/conformance_server.mjs (the TypeScript SDK, with tasks of
// its own), behind the hub under its namespace. What the conformance suite's tasks-* scenarios do
// not look at is checked here: the task's result and questions are redacted and name the source,
// cancelling the hub's task cancels the source's, past 64 running tasks a call is followed
// while its client waits, and a restarted hub answers for the tasks it gave before (issue 43).
//
// No official SDK client speaks SEP-2663 yet (the TypeScript SDK 2.x knows the tasks of
// 2025-11-25 only), so this talks the wire the way the conformance suite's client does:
// stateless 2026-07-28 POSTs with the routing headers and per-request capabilities in `_meta`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import {
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  cleanup,
  waitForSourcesReady,
  runCapa,
} from './support.mjs';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'conformance_server.mjs');
// Quotes and a backslash: redaction must match the value as the source writes it.
const SECRET = 'sk-task-"q"\\b-5521';
const TASKS = 'io.modelcontextprotocol/tasks';
const TAKES_TASKS = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a source’s tasks relayed to a 2026-07-28 client', () => {
  let sandbox;
  let configFile;
  let hub;
  let removeConnection;
  let nextId = 0;

  /** One stateless 2026-07-28 request; its result, or throws its JSON-RPC error. */
  const rpc = async (method, params, capabilities = TAKES_TASKS) => {
    const name = params.name ?? params.taskId;
    const response = await fetch(hub.mcpUrl, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${hub.token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': method,
        ...(name === undefined ? {} : { 'Mcp-Name': name }),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++nextId,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'relay-tasks', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': capabilities,
          },
        },
      }),
    });
    const body = await response.text();
    // A JSON body, or an SSE stream whose last data line is the answer.
    const json = body.trimStart().startsWith('{')
      ? body
      : body
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .filter(Boolean)
          .at(-1);
    const message = JSON.parse(json);
    if (message.error) throw Object.assign(new Error(message.error.message), message.error);
    return message.result;
  };

  const call = (tool, args, capabilities) =>
    rpc('tools/call', { name: `fixture.${tool}`, arguments: args }, capabilities);
  const getTask = (taskId) => rpc('tasks/get', { taskId });

  /** Polls until the task's status is one of `wanted`, within 10 s. */
  const waitFor = async (taskId, ...wanted) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const task = await getTask(taskId);
      if (wanted.includes(task.status)) return task;
      assert.ok(Date.now() < deadline, `task still ${task.status}: ${JSON.stringify(task)}`);
      await sleep(100);
    }
  };

  before(async () => {
    sandbox = await makeSandbox('capa-relay-tasks-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'expose-all' },
      servers: [{ id: 'fixture', command: process.execPath, args: [FIXTURE], env: { SECRET: '${secret:secret}' } }],
    });
    // A secret the hub knows (it redacts what it knows): a connection's, in the keychain.
    const set = await runCapa(['--config', configFile, 'connections', 'set', 'fixture', 'personal'], {
      env: sandbox.env,
      input: SECRET,
    });
    assert.equal(set.code, 0, set.stderr);
    removeConnection = () =>
      runCapa(['--config', configFile, 'connections', 'remove', 'fixture', 'personal'], { env: sandbox.env });
    hub = await startHub({ configFile, sandbox });
    await waitForSourcesReady(hub, ['fixture']);
  });

  after(async () => {
    await hub?.stop();
    await removeConnection?.();
    await cleanup();
    await removeSandboxes();
  });

  it('gives the client a task of the hub’s whose result is redacted', async () => {
    const created = await call('slow_compute', { seconds: 1, label: SECRET });
    assert.equal(created.resultType, 'task', JSON.stringify(created));
    assert.equal(created.ttlMs, 70 * 60 * 1000, JSON.stringify(created));
    assert.equal(created.pollIntervalMs, 250);
    const done = await waitFor(created.taskId, 'completed', 'failed', 'cancelled');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const text = done.result.content[0].text;
    assert.match(text, /^Computation "\[redacted\]" completed after 1 seconds/);
    assert.ok(!JSON.stringify(done).includes('sk-task'), JSON.stringify(done));
    // A client that declared no tasks is answered at once, as before.
    const plain = await call('slow_compute', { seconds: 0, label: 'plain' }, { elicitation: { form: {} } });
    assert.equal(plain.resultType, 'complete');
  });

  it('puts the task’s questions to the client as the source’s, redacted, and passes the answer on', async () => {
    const created = await call('confirm_delete', { filename: SECRET });
    assert.equal(created.resultType, 'task', JSON.stringify(created));
    const asking = await waitFor(created.taskId, 'input_required');
    const [[key, request]] = Object.entries(asking.inputRequests);
    assert.equal(key, 'confirm');
    assert.equal(request.method, 'elicitation/create');
    assert.equal(request.params.message, "fixture asks: Delete '[redacted]'?");
    const ack = await rpc('tasks/update', {
      taskId: created.taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    assert.deepEqual(ack, { resultType: 'complete' });
    const done = await waitFor(created.taskId, 'completed', 'failed', 'cancelled');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.content[0].text, "deleted '[redacted]'");
  });

  it('cancels the source’s task when the client cancels the hub’s', async () => {
    const created = await call('slow_compute', { seconds: 60, label: 'to-cancel' });
    assert.equal(created.resultType, 'task');
    await waitFor(created.taskId, 'working');
    const ack = await rpc('tasks/cancel', { taskId: created.taskId });
    assert.deepEqual(ack, { resultType: 'complete' });
    // Cancellation is cooperative (SEP-2663; rmcp's `cancel_task` acknowledges at once): the
    // task reports `working` until its work has stopped and its end is kept, then `cancelled`.
    const ended = await waitFor(created.taskId, 'cancelled', 'completed', 'failed');
    assert.equal(ended.status, 'cancelled', JSON.stringify(ended));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const seen = await call('test_cancelled_tasks', {});
      if (JSON.parse(seen.content[0].text).includes('to-cancel')) break;
      assert.ok(Date.now() < deadline, `the source's task was not cancelled: ${seen.content[0].text}`);
      await sleep(100);
    }
  });

  it('refuses tasks/* to a request that did not declare the extension, and an unknown task', async () => {
    await assert.rejects(
      rpc('tasks/get', { taskId: 'nope' }, { elicitation: { form: {} } }),
      (e) => e.code === -32021 && e.data?.requiredCapabilities?.extensions?.[TASKS] !== undefined,
    );
    await assert.rejects(getTask('nope'), (e) => e.code === -32602);
    // A tool that needs a task refuses, through the hub, a client that takes none.
    await assert.rejects(
      call('failing_job', {}, { elicitation: { form: {} } }),
      (e) => e.code === -32021,
    );
  });

  it('answers after a restart for the tasks it gave before: an ended one as it ended, a working one as failed', async () => {
    const ended = await call('slow_compute', { seconds: 1, label: SECRET });
    assert.equal(ended.resultType, 'task', JSON.stringify(ended));
    const before = await waitFor(ended.taskId, 'completed', 'failed', 'cancelled');
    assert.equal(before.status, 'completed', JSON.stringify(before));
    const working = await call('slow_compute', { seconds: 60, label: 'cut-short' });
    assert.equal(working.resultType, 'task', JSON.stringify(working));
    await waitFor(working.taskId, 'working');

    await hub.stop();
    hub = await startHub({ configFile, sandbox });
    await waitForSourcesReady(hub, ['fixture']);

    const after = await getTask(ended.taskId);
    assert.equal(after.status, 'completed', JSON.stringify(after));
    assert.deepEqual(after.result, before.result);
    assert.equal(after.createdAt, before.createdAt);
    assert.ok(!JSON.stringify(after).includes('sk-task'), JSON.stringify(after));
    // Its call went with the stopped hub: not `working` for ever, and the client is told why.
    const cut = await getTask(working.taskId);
    assert.equal(cut.status, 'failed', JSON.stringify(cut));
    assert.match(cut.error.message, /stopped while this task's call ran/);
    // Still unknown: a task id the hub never gave.
    await assert.rejects(getTask('00000000-0000-4000-8000-000000000000'), (e) => e.code === -32602);
  });

  it('follows a source’s task while its client waits once 64 of the hub’s run', async () => {
    const running = [];
    for (let i = 0; i < 64; i++) {
      const created = await call('slow_compute', { seconds: 60, label: `fill-${i}` });
      assert.equal(created.resultType, 'task', `task ${i}: ${JSON.stringify(created)}`);
      running.push(created.taskId);
    }
    try {
      const waited = await call('slow_compute', { seconds: 1, label: 'waited' });
      assert.equal(waited.resultType, 'complete', JSON.stringify(waited));
      assert.match(waited.content[0].text, /^Computation "waited" completed after 1 seconds/);
    } finally {
      for (const taskId of running) await rpc('tasks/cancel', { taskId });
    }
    // Room again: the next one is a task.
    const next = await call('slow_compute', { seconds: 1, label: 'after' });
    assert.equal(next.resultType, 'task', JSON.stringify(next));
  });
});
