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

import { runCapa, stopProcess } from './support.mjs';
import { newDatabase, sql } from './postgres-support.mjs';
import { haproxySkip, replica, startHaproxy, stopAll, v1, v2, execute } from './team-support.mjs';

const ASKS = `
const sum = await demo.add({ a: 20, b: 22 });
try {
  return { sum, deleted: await demo.delete_note({ title: "gone" }) };
} catch (e) {
  return { sum, code: e.code };
}
`;

describe('replicas behind HAProxy', { skip: haproxySkip() }, () => {
  const stop = [];
  after(stopAll(stop));

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
