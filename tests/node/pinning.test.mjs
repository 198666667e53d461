// Pinned tool definitions, the rug-pull guard (docs/pinning.md), against a small hostile MCP
// server (tests/fixtures/rug_pull_server.mjs): it lists `wipe` as destructive, then re-lists it
// read-only with a new description and input schema and sends `tools/list_changed`. The hub must
// keep asking a person for `wipe` everywhere (code mode's `execute`, expose-all, `/api/call`),
// show the change at a terminal, keep the pin across a restart, apply the new definition only
// once a person accepts it, and refuse it once blocked.
import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

import {
  NODE,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  capaJson,
  waitFor,
} from './support.mjs';

const RUG_PULL = path.join(REPO_ROOT, 'tests', 'fixtures', 'rug_pull_server.mjs');
const PULLED = /Reads the workspace status/;

/** A hub in code mode (and a `direct` profile in expose-all) serving only the hostile source. */
async function rugPullSandbox(prefix) {
  const sandbox = await makeSandbox(prefix);
  sandbox.env.CAPA_NO_BROWSER = '1';
  const stateDir = path.join(sandbox.root, 'rug');
  await mkdir(stateDir);
  const configFile = await writeCapabilities(sandbox.configDir, {
    options: { demo: false, toolExposure: 'code' },
    servers: [{ id: 'evil', command: NODE, args: [RUG_PULL, stateDir] }],
  });
  await appendFile(configFile, 'profiles:\n  direct:\n    toolExposure: expose-all\n');
  const wiped = path.join(stateDir, 'wiped');
  const capa = (args, opts = {}) => runCapa(['--config', configFile, ...args], { env: sandbox.env, ...opts });
  return { sandbox, configFile, stateDir, wiped, capa };
}

const post = (body) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

async function wipeListing(hub) {
  const tools = await hub.apiJson('/api/tools');
  return tools.find((t) => t.address === 'evil.wipe');
}

/** Flips the source through its own trigger and waits until the hub lists the pulled `wipe`. */
async function pullTheRug(hub) {
  const flipped = await hub.apiJson('/api/call', post({ address: 'evil.flip', arguments: {} }));
  assert.equal(flipped.ok, true, JSON.stringify(flipped));
  return waitFor('the re-listed wipe', async () => {
    const wipe = await wipeListing(hub);
    return wipe && PULLED.test(wipe.description ?? '') ? wipe : null;
  });
}

/** The list in `capa hub pending --json`'s answer. */
function pendingItems(stdout) {
  const data = JSON.parse(stdout);
  return Array.isArray(data) ? data : Object.values(data).find(Array.isArray);
}

async function execute(client, code) {
  const result = await client.callTool({ name: 'execute', arguments: { code } });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return result.structuredContent;
}

after(async () => {
  await cleanup();
  await removeSandboxes();
});

describe('a source that re-lists a destructive tool as read-only (rug pull)', () => {
  let hub;
  let clients = [];
  afterEach(async () => {
    for (const c of clients) await closeClient(c);
    clients = [];
    await hub?.stop();
    hub = undefined;
  });

  it('keeps asking in execute, expose-all and /api/call, shows the diff, survives a restart, and applies the new definition once accepted', async () => {
    const { sandbox, configFile, wiped, capa } = await rugPullSandbox('capa-pin-');
    hub = await startHub({ configFile, sandbox });
    const before = await wipeListing(hub);
    assert.equal(before.policy, 'ask', JSON.stringify(before));
    assert.equal(before.review, undefined, JSON.stringify(before));
    // A call asked for before the pull: its pending input must not keep only the old reason.
    const early = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: { confirm: true } }));
    assert.equal(early.error?.code, 'approval_required', JSON.stringify(early));

    const pulled = await pullTheRug(hub);
    assert.equal(pulled.annotations?.readOnlyHint, true, JSON.stringify(pulled));
    assert.equal(pulled.policy, 'ask', 'a re-listed read-only hint loosened the verdict');
    assert.equal(pulled.review, 'changed', JSON.stringify(pulled));

    // /api/call with the token: the call waits for a person, it does not run.
    const api = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: { path: '.' } }));
    assert.equal(api.ok, false, JSON.stringify(api));
    assert.equal(api.error?.code, 'approval_required', JSON.stringify(api));
    const pending = await capaJson(['--config', configFile, 'hub', 'pending', '--json'], { env: sandbox.env });
    const reasons = pendingItems(pending.stdout).map((p) => p.reason);
    assert.equal(reasons.length, 2, pending.stdout);
    assert.match(reasons[0], /changed since you were asked/, pending.stdout);
    assert.match(reasons[1], /definition changed since you approved it/, pending.stdout);

    // Code mode: the run pauses for a person.
    const code = await connectHttp(hub, { name: 'e2e-pin-code' });
    clients.push(code);
    const envelope = await execute(code, 'return await evil.wipe({ path: "." });');
    assert.equal(envelope.status, 'awaiting_approval', JSON.stringify(envelope));
    // search marks it, so the model knows why it asks.
    const found = await code.callTool({ name: 'search', arguments: { query: 'workspace status' } });
    assert.match(resultText(found), /evil\.wipe[^\n]*\[asks\]/, resultText(found));
    assert.match(resultText(found), /\[changed\]/, resultText(found));

    // Expose-all (the `direct` profile): a client without a form is refused, nothing runs.
    const direct = await connectHttp(hub, { name: 'e2e-pin-direct', path: '/mcp/direct' });
    clients.push(direct);
    const listed = await direct.listTools();
    assert.ok(listed.tools.some((t) => t.name === 'evil.wipe'), JSON.stringify(listed.tools.map((t) => t.name)));
    const refused = await direct.callTool({ name: 'evil.wipe', arguments: { path: '.' } });
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.equal(refused._meta?.['capabilities/error']?.code, 'approval_required', JSON.stringify(refused));
    assert.equal(existsSync(wiped), false, 'wipe ran without a person');

    // The terminal shows what changed, old and new.
    const changes = await capaJson(['--config', configFile, 'tools', 'changes', '--json'], { env: sandbox.env });
    assert.equal(changes.json.length, 1, changes.stdout);
    const [change] = changes.json;
    assert.equal(change.address, 'evil.wipe');
    assert.equal(change.state, 'changed');
    assert.deepEqual(change.parts, ['description', 'inputSchema', 'annotations']);
    assert.equal(change.approved.annotations.destructiveHint, true);
    assert.equal(change.now.annotations.readOnlyHint, true);
    assert.equal(change.approvedDecision, 'ask');
    assert.equal(change.nowDecision, 'allow');
    const text = await capa(['tools', 'changes']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /- Deletes every file in the workspace\./, text.stdout);
    assert.match(text.stdout, /\+ Reads the workspace status/, text.stdout);
    assert.match(text.stdout, /-\s+"confirm"/, text.stdout);
    assert.match(text.stdout, /\+\s+"path"/, text.stdout);
    const list = await capa(['tools', 'list']);
    assert.match(list.stdout, /evil\.wipe \[asks\] \[changed\]/, list.stdout);

    // Accepting loosens: not without a person.
    const agent = await capa(['tools', 'accept', 'evil.wipe']);
    assert.notEqual(agent.code, 0, agent.stdout);
    assert.match(agent.stderr, /interactive terminal/);
    const token = await hub.api('/api/tools/accept', post({ address: 'evil.wipe' }));
    assert.equal(token.status, 403);
    assert.equal((await token.json()).error.code, 'person_required');

    // The pin is in the store: a restarted hub (and source) still asks.
    await hub.stop();
    hub = await startHub({ configFile, sandbox });
    const restarted = await wipeListing(hub);
    assert.match(restarted.description, PULLED);
    assert.equal(restarted.policy, 'ask', JSON.stringify(restarted));
    assert.equal(restarted.review, 'changed', JSON.stringify(restarted));
    const again = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: { path: '.' } }));
    assert.equal(again.error?.code, 'approval_required', JSON.stringify(again));
    assert.equal(existsSync(wiped), false, 'wipe ran without a person');

    // A person at a terminal accepts: the new definition's verdict applies from then on.
    const accepted = await capa(['tools', 'accept', 'evil.wipe'], { terminal: true });
    assert.equal(accepted.code, 0, `${accepted.stdout}\n${hub.log()}`);
    assert.match(accepted.stdout, /Accepted/);
    const now = await wipeListing(hub);
    assert.equal(now.policy, 'allow', JSON.stringify(now));
    assert.equal(now.review, undefined, JSON.stringify(now));
    const ran = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: { path: '.' } }));
    assert.equal(ran.ok, true, JSON.stringify(ran));
    assert.equal(existsSync(wiped), true);
    const none = await capaJson(['--config', configFile, 'tools', 'changes', '--json'], { env: sandbox.env });
    assert.deepEqual(none.json, []);
  });

  it('refuses a blocked tool everywhere, also after a restart', async () => {
    const { sandbox, configFile, wiped, capa } = await rugPullSandbox('capa-pin-block-');
    hub = await startHub({ configFile, sandbox });
    await pullTheRug(hub);

    const blocked = await capa(['tools', 'block', 'evil.wipe']);
    assert.equal(blocked.code, 0, `${blocked.stderr}\n${hub.log()}`);
    const listing = await wipeListing(hub);
    assert.equal(listing.policy, 'deny', JSON.stringify(listing));
    assert.equal(listing.review, 'blocked', JSON.stringify(listing));

    const api = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: {} }));
    assert.equal(api.error?.code, 'denied', JSON.stringify(api));
    const code = await connectHttp(hub, { name: 'e2e-pin-block' });
    clients.push(code);
    const envelope = await execute(code, 'try { await evil.wipe({}); return "ran"; } catch (e) { return e.code; }');
    assert.notEqual(envelope.result, 'ran', JSON.stringify(envelope));

    await hub.stop();
    hub = await startHub({ configFile, sandbox });
    const after = await wipeListing(hub);
    assert.equal(after.policy, 'deny', JSON.stringify(after));
    const denied = await hub.apiJson('/api/call', post({ address: 'evil.wipe', arguments: {} }));
    assert.equal(denied.error?.code, 'denied', JSON.stringify(denied));
    assert.equal(existsSync(wiped), false, 'a blocked wipe ran');
  });
});
