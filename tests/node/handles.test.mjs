// Large results as handles (docs/code-mode.md, "Large results"): a 10 MB result built from a real
// upstream (the Python SDK fixture tests/fixtures/sized_server.py; one upstream message is at most
// 8 MB, so the code joins four calls) comes back shortened with a handle; the next `execute` of the
// same client reads it back whole in pieces and by path, a client with another name cannot, a hub
// killed with SIGKILL still has it after a restart, and the run history shows it. TypeScript SDK
// client over Streamable HTTP.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { REPO_ROOT, makeSandbox, removeSandboxes, writeCapabilities, startHub, connectHttp, closeClient, cleanup } from './support.mjs';

const PYTHON = path.join(REPO_ROOT, 'tests', '.venv', 'bin', 'python');
const SIZED = path.join(REPO_ROOT, 'tests', 'fixtures', 'sized_server.py');

// Four pages of 20,000 items of about 130 bytes: 10.4 MB of JSON. The ids are renumbered in place
// (no copies), so the guest holds the pages once within its 64 MB.
const BIG = `const pages = await Promise.all([0, 1, 2, 3].map(() => sized.items({ count: 20000 })));
const items = [];
for (const [p, page] of pages.entries()) for (const item of page.items) { item.id = p * 20000 + item.id; items.push(item); }
return { items, total: items.length };`;

// The JSON text of BIG's result, built here from what sized_server.py answers.
function bigText() {
  const items = [];
  for (let p = 0; p < 4; p++) {
    for (let i = 0; i < 20000; i++) items.push({ id: p * 20000 + i, title: `item ${i} ${'x'.repeat(100)}` });
  }
  return JSON.stringify({ items, total: items.length });
}

async function execute(client, code) {
  const res = await client.callTool({ name: 'execute', arguments: { code } }, undefined, { timeout: 120_000 });
  assert.ok(!res.isError, JSON.stringify(res).slice(0, 2000));
  return res.structuredContent;
}

describe('large results as handles, read with hub.read', () => {
  let sandbox;
  let configFile;
  let hub;
  let client;
  let big;

  before(async () => {
    sandbox = await makeSandbox('capa-handles-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: false, toolExposure: 'code' },
      servers: [{ id: 'sized', command: PYTHON, args: [SIZED] }],
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'handles-e2e' });
    big = await execute(client, BIG);
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('returns what fits, and a handle to the whole 10 MB result', () => {
    assert.equal(big.status, 'completed', JSON.stringify(big).slice(0, 2000));
    assert.equal(big.truncated?.result, true);
    assert.ok(JSON.stringify(big.result).length <= 24 * 1024, 'the inline part stays within inlineResultBytes');
    assert.equal(big.handles?.length, 1, JSON.stringify(big.handles));
    const [h] = big.handles;
    assert.match(h.handle, /^h_[0-9a-f]{32}$/);
    assert.equal(h.of, 'result');
    assert.equal(h.type, 'object');
    assert.ok(h.bytes > 10_000_000, `${h.bytes} bytes`);
    assert.equal(h.preview, 'object with 2 keys: items, total');
    assert.ok(big.notices.some((n) => n.includes('hub.read(handle, { path')), big.notices.join('\n'));
  });

  it('reads the value at a path, and every piece back to the same bytes', async () => {
    const { handle, bytes } = big.handles[0];
    const read = await execute(
      client,
      `const last = await hub.read(${JSON.stringify(handle)}, { path: "items[79999]" });
       const total = await hub.read(${JSON.stringify(handle)}, { path: "total" });
       let next = 0, length = 0;
       const samples = [];
       while (next !== null) {
         const piece = await hub.read(${JSON.stringify(handle)}, { offset: next, length: 1024 * 1024 });
         length += piece.data.length; next = piece.next;
         samples.push([piece.offset, piece.data.length, piece.data.slice(0, 40), piece.data.slice(-40)]);
       }
       return { last: last.data, total: total.data, length, samples };`,
    );
    assert.equal(read.status, 'completed', JSON.stringify(read).slice(0, 2000));
    assert.equal(read.result.last.id, 79999);
    assert.equal(read.result.total, 80000);
    const text = bigText();
    assert.equal(bytes, text.length, 'the handle counts the JSON text (ASCII: characters are bytes)');
    assert.equal(read.result.length, bytes);
    assert.equal(read.result.samples.length, Math.ceil(bytes / (1024 * 1024)));
    // Each piece starts where the last ended and holds the text at its offset, both ends.
    let at = 0;
    for (const [offset, length, head, tail] of read.result.samples) {
      assert.equal(offset, at);
      assert.equal(head, text.slice(offset, offset + 40));
      assert.equal(tail, text.slice(offset + length - 40, offset + length));
      at += length;
    }
  });

  it('answers a wrong path or option with a ToolError that says what is there', async () => {
    const { handle } = big.handles[0];
    const res = await execute(
      client,
      `const out = [];
       for (const options of [{ path: "itemz" }, { path: "items[80000]" }, { offset: -1 }, { path: 3 }]) {
         try { await hub.read(${JSON.stringify(handle)}, options); out.push("read"); }
         catch (e) { out.push(e.code + ": " + e.message); }
       }
       return out;`,
    );
    const [noKey, pastEnd, negative, notString] = res.result;
    assert.match(noKey, /^not_found: no key `itemz` at the top; its keys: items, total/);
    assert.match(pastEnd, /^not_found: index 80000 is past the end of `.items`, which has 80000 items/);
    assert.match(negative, /^invalid_arguments: `offset` is a whole number/);
    assert.match(notString, /^invalid_arguments: `path` is a string/);
  });

  it('is not readable by a client with another name', async () => {
    const other = await connectHttp(hub, { name: 'someone-else' });
    try {
      const res = await execute(
        other,
        `try { await hub.read(${JSON.stringify(big.handles[0].handle)}); return "read"; } catch (e) { return e.code; }`,
      );
      assert.equal(res.result, 'handle_not_found');
    } finally {
      await closeClient(other);
    }
  });

  it('shows in the run history, a piece readable by a person', async () => {
    const detail = (await hub.apiJson(`/api/runs/${big.runId}`)).run;
    assert.deepEqual(
      detail.keptHandles.map((k) => [k.id, k.of, k.type, k.bytes]),
      [[big.handles[0].handle, 'result', 'object', big.handles[0].bytes]],
    );
    const { piece } = await hub.apiJson(`/api/runs/${big.runId}/handles/${big.handles[0].handle}?offset=0&length=100`);
    assert.equal(piece.data.length, 100);
    assert.equal(piece.next, 100);
    const wrongRun = await hub.api(`/api/runs/run_0000000000000000/handles/${big.handles[0].handle}`);
    assert.equal(wrongRun.status, 404);
  });

  it('keeps a logs handle too, and both survive a hub killed with SIGKILL', async () => {
    const logged = await execute(client, `for (let i = 0; i < 5000; i++) console.log("line " + i); return 1;`);
    assert.equal(logged.truncated?.logs, true);
    const logsHandle = logged.handles.find((h) => h.of === 'logs');
    assert.ok(logsHandle, JSON.stringify(logged.handles));
    assert.equal(logsHandle.preview, '5,000 log lines');

    await closeClient(client);
    client = null;
    hub.proc.kill('SIGKILL');
    await new Promise((resolve) => hub.proc.once('exit', resolve));
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'handles-e2e' });
    const res = await execute(
      client,
      `const logs = await hub.read(${JSON.stringify(logsHandle.handle)}, { offset: 0, length: 13 });
       const first = await hub.read(${JSON.stringify(big.handles[0].handle)}, { path: "items[0].id" });
       return [logs.data, logs.total, first.data];`,
    );
    assert.deepEqual(res.result, ['line 0\nline 1', logsHandle.bytes, 0]);
  });
});
