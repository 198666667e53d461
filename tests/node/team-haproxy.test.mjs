// A team hub's two replicas on one PostgreSQL database behind HAProxy (issue 44), run with the
// sample configuration docs/team-haproxy.cfg as it is:
// - both replicas accept the one token they share through the database, and stateless requests
//   are spread over both;
// - a 2025-era session (TS SDK 1.x) stays on the replica that made it, run after run;
// - a 2026-07-28 client (TS SDK 2.x, no session) runs through whichever replica answers;
// - the replica holding a paused run is killed (SIGKILL); a person approves at a terminal against
//   the other; a new session through HAProxy resumes the run there and it completes.
//
// Needs CAPA_TEST_POSTGRES (scripts/test starts a server) and Debian's haproxy.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import {
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  cleanup,
  freePort,
  runCapa,
  stopProcess,
  trackPid,
} from './support.mjs';
import { skipOrFail } from './require.mjs';
import { SERVER, newDatabase, dropDatabases, sql } from './postgres-support.mjs';

const HAPROXY = spawnSync('haproxy', ['-v']).status === 0;
const skip = skipOrFail([
  SERVER ? null : 'CAPA_TEST_POSTGRES is not set (eval "$(tests/support/postgres.sh start)" starts a server)',
  HAPROXY ? null : 'haproxy is not installed (apt-get install haproxy; scripts/setup --test does)',
]);

async function replica(prefix, store, configDir) {
  const sandbox = await makeSandbox(prefix);
  if (configDir) {
    sandbox.configDir = configDir;
    sandbox.env.CAPA_CONFIG_DIR = configDir;
  }
  sandbox.env.CAPA_NO_BROWSER = '1';
  sandbox.env.CAPA_STORE = store;
  const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true, toolExposure: 'code' } });
  const hub = await startHub({ configFile, sandbox });
  return { sandbox, configFile, hub };
}

/** HAProxy with docs/team-haproxy.cfg in front of `a` and `b`; resolves once it serves. */
async function startHaproxy(a, b, token) {
  const port = await freePort();
  const hostOf = (hub) => new URL(hub.url).host;
  const proc = spawn('haproxy', ['-db', '-f', path.join(REPO_ROOT, 'docs', 'team-haproxy.cfg')], {
    env: {
      ...process.env,
      CAPA_LISTEN: `127.0.0.1:${port}`,
      CAPA_HUB_A: hostOf(a),
      CAPA_HUB_B: hostOf(b),
      CAPA_TOKEN: token,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackPid(proc.pid);
  let log = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (log += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`${url}/api/health`, { headers: { Authorization: `Bearer ${token}` } });
      if (res.ok) return { proc, url, log: () => log };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopProcess(proc);
  throw new Error(`haproxy did not serve:\n${log}`);
}

async function v1(url, token) {
  const client = new Client({ name: 'e2e-lb-v1', version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

async function v2(url, token) {
  const client = new ClientV2(
    { name: 'e2e-lb-v2', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new HttpV2(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, JSON.stringify(result));
  return result.structuredContent;
}

const ASKS = `
const sum = await demo.add({ a: 20, b: 22 });
try {
  return { sum, deleted: await demo.delete_note({ title: "gone" }) };
} catch (e) {
  return { sum, code: e.code };
}
`;

describe('replicas behind HAProxy', { skip }, () => {
  const stop = [];
  after(async () => {
    for (const s of stop.reverse()) await s();
    dropDatabases();
    await cleanup();
    await removeSandboxes();
  });

  it('spreads stateless requests, keeps sessions, and resumes a dead replica\'s paused run on the other', async () => {
    const store = newDatabase('lb');
    const a = await replica('capa-lb-a-', store);
    stop.push(() => a.hub.stop());
    const b = await replica('capa-lb-b-', store, a.sandbox.configDir);
    stop.push(() => b.hub.stop());
    assert.equal(a.hub.token, b.hub.token, 'the replicas share one token through the database');
    const lb = await startHaproxy(a.hub, b.hub, a.hub.token);
    stop.push(() => stopProcess(lb.proc));

    // Stateless: /api/health names the process that answered.
    const pids = new Set();
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${lb.url}/api/health`, { headers: { Authorization: `Bearer ${a.hub.token}` } });
      assert.equal(res.status, 200);
      pids.add((await res.json()).pid);
    }
    assert.deepEqual([...pids].sort(), [a.hub.pid, b.hub.pid].sort(), 'both replicas answered');

    // A 2025-era session: every request goes back to the replica that holds the session (the
    // other answers 404 to a session it does not know).
    const session = await v1(lb.url, a.hub.token);
    for (let i = 0; i < 6; i++) {
      const envelope = await execute(session, { code: `return ${i} * 2` });
      assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
      assert.equal(envelope.result, i * 2);
    }
    // A 2026-07-28 client: no session, any replica.
    const modern = await v2(lb.url, a.hub.token);
    for (let i = 0; i < 4; i++) {
      const envelope = await execute(modern, { code: 'return "any replica"' });
      assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
    }
    await modern.close();

    // A run that asks, paused in the database; the replica that holds it dies.
    const paused = await execute(session, { code: ASKS });
    assert.equal(paused.status, 'awaiting_approval', JSON.stringify(paused));
    const runId = paused.runId;
    const ownerPid = Number(sql(store, `SELECT owner_pid FROM runs WHERE id = '${runId}'`));
    const [dead, alive] = ownerPid === a.hub.pid ? [a, b] : [b, a];
    assert.equal(ownerPid, dead.hub.pid);
    dead.hub.proc.kill('SIGKILL');
    await new Promise((resolve) => dead.hub.proc.once('exit', resolve));
    await session.close().catch(() => {});

    const approved = await runCapa(['--config', alive.configFile, 'hub', 'approve', runId], {
      env: alive.sandbox.env,
      terminal: true,
    });
    assert.equal(approved.code, 0, `${approved.stdout}\n${alive.hub.log()}`);

    // The client reconnects through HAProxy, which now sends it to the replica alive.
    const again = await v1(lb.url, a.hub.token);
    const done = await execute(again, { resume: runId });
    assert.equal(done.status, 'completed', `${JSON.stringify(done)}\n${alive.hub.log()}\n${lb.log()}`);
    assert.equal(done.result.sum, 42, 'the journaled call is answered from the journal');
    await again.close();
    assert.equal(sql(store, `SELECT status FROM runs WHERE id = '${runId}'`), 'completed');
  });
});
