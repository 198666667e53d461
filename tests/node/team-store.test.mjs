// The hub on PostgreSQL (issue 44, docs/team.md) with the official TypeScript client: a run that
// asks, started through hub A, is paused in the database; A is killed (SIGKILL); hub B, another
// process with another data dir on the same database, lists the pending input; a person approves
// it at a terminal against B; the run resumes through B and completes. The history of both is one,
// and the approved call reached the upstream both hubs share (a Streamable HTTP server that
// counts calls, tests/fixtures/ledger-server.mjs) exactly once.
//
// Needs CAPA_TEST_POSTGRES (a server's address: scripts/test starts one with
// tests/support/postgres.sh); each test makes a database of its own there with psql.
import { describe, it, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';

import {
  removeSandboxes,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  startLedger,
} from './support.mjs';
import { skipOrFail } from './require.mjs';
import { SERVER, newDatabase, dropDatabases } from './postgres-support.mjs';
import { teamSandbox } from './team-support.mjs';

/** A password with the characters URLs and logs treat specially. */
const CANARY = 'canary-pw"q\\b@s/x';

const skip = skipOrFail(
  SERVER ? [] : ['CAPA_TEST_POSTGRES is not set (eval "$(tests/support/postgres.sh start)" starts a server)'],
);

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return result.structuredContent;
}

// `ledger.remove` is destructive: it asks a person.
const KEY = 'it\'s "quoted" \\ here';
const ASKS = `
const sum = await demo.add({ a: 20, b: 22 });
return { sum, removed: await ledger.remove({ key: ${JSON.stringify(KEY)} }) };
`;

describe('the hub on PostgreSQL', { skip }, () => {
  let hubs = [];
  let client;
  let ledger;
  afterEach(async () => {
    await closeClient(client);
    client = undefined;
    for (const hub of hubs) await hub.stop();
    hubs = [];
  });
  after(async () => {
    await ledger?.stop();
    dropDatabases();
    await cleanup();
    await removeSandboxes();
  });

  it('keeps a paused run for another hub process, which resumes it after A is killed', async () => {
    // A canary password (the test server trusts loopback, so it is never checked): it must
    // show nowhere, raw or encoded.
    const plain = newDatabase('e2e');
    const withPassword = new URL(plain);
    withPassword.username = 'postgres';
    withPassword.password = CANARY;
    const store = withPassword.toString();
    ledger = await startLedger();
    const servers = [{ id: 'ledger', url: ledger.url }];
    const a = await teamSandbox('capa-team-a-', store, undefined, servers);
    // As a person troubleshooting would: the driver's statement log (with its parameters: the
    // shared token and keys) stays off all the same.
    a.sandbox.env.RUST_LOG = 'debug';
    const hubA = await startHub(a);
    hubs.push(hubA);
    for (const form of [CANARY, encodeURIComponent(CANARY), store]) {
      assert.ok(!hubA.log().includes(form), `the store's password is in the log: ${form}`);
    }
    assert.doesNotMatch(hubA.log(), /executing statement/, 'the driver logs statements');
    assert.ok(!hubA.log().includes(hubA.token), 'the token is in the log');
    assert.ok(!hubA.log().includes([...Buffer.from(hubA.token)].join(', ')), 'the token is in the log as bytes');
    client = await connectHttp(hubA, { name: 'e2e-team' });
    const paused = await execute(client, { code: ASKS });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    const runId = paused.runId;
    await closeClient(client);
    client = undefined;

    assert.deepEqual(await ledger.counts(), {}, 'the call that asks waited for the person');
    hubA.proc.kill('SIGKILL');
    await new Promise((resolve) => hubA.proc.once('exit', resolve));
    hubs = [];

    // Hub B: another process and data dir (its own token, state key and notes), the same
    // database and policy.
    const b = await teamSandbox('capa-team-b-', store, a.sandbox.configDir, servers);
    const hubB = await startHub(b);
    hubs.push(hubB);
    const pending = await runCapa(['--config', b.configFile, 'hub', 'pending', '--json'], { env: b.sandbox.env });
    assert.equal(pending.code, 0, pending.stderr);
    const items = JSON.parse(pending.stdout);
    const listed = (Array.isArray(items) ? items : items.pending ?? items.items).filter((p) => p.runId === runId);
    assert.equal(listed.length, 1, pending.stdout);
    assert.equal(listed[0].address, 'ledger.remove');

    const approved = await runCapa(['--config', b.configFile, 'hub', 'approve', runId], {
      env: b.sandbox.env,
      terminal: true,
    });
    assert.equal(approved.code, 0, `${approved.stdout}\n${hubB.log()}`);

    client = await connectHttp(hubB, { name: 'e2e-team' });
    const done = await execute(client, { resume: runId });
    assert.equal(done.status, 'completed', `${JSON.stringify(done)}\n${hubB.log()}`);
    assert.equal(done.runId, runId);
    assert.equal(done.result.sum, 42, 'the journaled call is answered from the journal');
    assert.deepEqual(done.result.removed, { tool: 'remove', key: KEY, count: 1 });
    // A second resume, through either process's successor, answers the run's result again.
    const again = await execute(client, { resume: runId });
    assert.equal(again.status, 'completed', JSON.stringify(again));
    assert.deepEqual(await ledger.counts(), { [`remove:${KEY}`]: 1 }, 'the approved call reached its upstream once');

    const runs = await hubB.apiJson(`/api/runs?limit=10`);
    const listedRuns = Array.isArray(runs) ? runs : runs.runs;
    const run = listedRuns.find((r) => r.id === runId);
    assert.ok(run, JSON.stringify(runs));
    assert.equal(run.status, 'completed');
  });

  it('says which store it could not open, without its password', async () => {
    const wrong = new URL(SERVER);
    wrong.username = 'nobody';
    wrong.password = CANARY;
    wrong.port = '1';
    const { sandbox, configFile } = await teamSandbox('capa-team-bad-', wrong.toString());
    const result = await runCapa(['--config', configFile, 'hub', 'serve', '--http', '127.0.0.1:0'], {
      env: sandbox.env,
      timeoutMs: 20000,
    });
    assert.notEqual(result.code, 0);
    const said = result.stdout + result.stderr;
    assert.match(said, /postgres:\/\/127\.0\.0\.1:1/, said);
    for (const form of [CANARY, encodeURIComponent(CANARY)]) assert.ok(!said.includes(form), said);

    // On the command line a password would be in the process list: refused, without echoing it.
    const flagged = await runCapa(
      ['--config', configFile, 'hub', 'serve', '--http', '127.0.0.1:0', '--store', wrong.toString()],
      { env: { ...sandbox.env, CAPA_STORE: '' }, timeoutMs: 20000 },
    );
    assert.notEqual(flagged.code, 0);
    assert.match(flagged.stderr, /process list/, flagged.stderr);
    for (const form of [CANARY, encodeURIComponent(CANARY)]) assert.ok(!flagged.stderr.includes(form), flagged.stderr);
  });
});
