// Faults of upstream servers, seen through the hub over Streamable HTTP: a child killed in the middle
// of a call, and a call that outlives options.upstreamTimeoutMs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  alive,
  childrenOf,
  trackPid,
  waitFor,
} from './support.mjs';

const LONG = 'everything.trigger-long-running-operation';

/** The server-everything process that the hub started (a direct child of the hub). */
function everythingChild(hubPid) {
  const kids = childrenOf(hubPid).filter((p) => p.args.includes('server-everything'));
  assert.equal(kids.length, 1, `one server-everything child of the hub: ${JSON.stringify(kids)}`);
  trackPid(kids[0].pid);
  return kids[0];
}

function capabilitiesError(result) {
  const err = result?._meta?.['capabilities/error'];
  assert.ok(err, `result has _meta["capabilities/error"]: ${JSON.stringify(result)}`);
  return err;
}

describe('an upstream child killed mid-call', () => {
  let sandbox;
  let hub;
  let client;

  before(async () => {
    sandbox = await makeSandbox('capa-faults-kill-');
    const configFile = await writeCapabilities(sandbox.configDir, { servers: [everythingStdio()] });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub);
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('fails the call with upstream_unavailable (retryable), keeps serving, restarts the child', async () => {
    const victim = everythingChild(hub.pid);
    // Control: the child answers before we kill it.
    const warm = await client.callTool({ name: 'everything.echo', arguments: { message: 'before' } });
    assert.equal(resultText(warm), 'Echo: before');

    // The operation reports progress after each of its 5 steps; the first report shows the call
    // is at the upstream, so the kill comes in the middle of it (an order, not a clock).
    const reports = [];
    let settled = false;
    const call = client
      .callTool({ name: LONG, arguments: { duration: 10, steps: 5 } }, undefined, {
        timeout: 30000,
        onprogress: (p) => reports.push(p),
      })
      .then(
        (r) => ((settled = true), { result: r }),
        (e) => ((settled = true), { error: e }),
      );
    await waitFor('the long call to report its first step', () => reports.length > 0, { timeoutMs: 15000 });
    assert.equal(settled, false, 'the long call is still running before the kill');
    process.kill(victim.pid, 'SIGKILL');

    const outcome = await call;
    assert.ok(!outcome.error, `the call resolves to a tool result, not a protocol error: ${outcome.error}`);
    const { result } = outcome;
    assert.equal(result.isError, true, JSON.stringify(result));
    const err = capabilitiesError(result);
    assert.equal(err.code, 'upstream_unavailable', JSON.stringify(err));
    assert.equal(err.retryable, true, JSON.stringify(err));
    // Answered before the operation could have completed: its last step was never reported.
    assert.ok(reports.every((r) => r.progress < 5), JSON.stringify(reports));
    assert.equal(alive(victim.pid), false, 'the killed child is gone (reaped)');

    // The hub keeps serving.
    const add = await client.callTool({ name: 'demo.add', arguments: { a: 20, b: 22 } });
    assert.notEqual(add.isError, true, JSON.stringify(add));
    assert.equal(resultText(add).trim(), '42');

    // Within ~10 s the source is back (a new child) and echo works again.
    const echo = await waitFor(
      'everything.echo to work again',
      async () => {
        const r = await client.callTool({ name: 'everything.echo', arguments: { message: 'after' } });
        return r.isError ? null : r;
      },
      { timeoutMs: 10000, intervalMs: 250 },
    );
    assert.equal(resultText(echo), 'Echo: after');
    const replacement = everythingChild(hub.pid);
    assert.notEqual(replacement.pid, victim.pid, 'a new server-everything process');

    const sources = await hub.apiJson('/api/sources');
    const everything = sources.find((s) => s.id === 'everything');
    assert.equal(everything.state, 'ready', JSON.stringify(everything));
    assert.equal(everything.pid, replacement.pid, `status shows the new pid: ${JSON.stringify(everything)}`);
    assert.ok(everything.restarts >= 1, `status counts the restart: ${JSON.stringify(everything)}`);
  });
});

describe('an upstream call that outlives upstreamTimeoutMs', () => {
  let sandbox;
  let hub;
  let client;

  before(async () => {
    sandbox = await makeSandbox('capa-faults-timeout-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { upstreamTimeoutMs: 1000 },
      servers: [everythingStdio()],
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub);
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('fails with upstream_timeout (retryable) well before the operation ends', async () => {
    // Control: a short operation inside the limit completes.
    const short = await client.callTool({ name: LONG, arguments: { duration: 0.2, steps: 2 } });
    assert.notEqual(short.isError, true, JSON.stringify(short));
    assert.match(resultText(short), /completed/);

    // Not before the limit: the control above, 0.2 s inside the 1 s limit, completed. Well before
    // the 5 s operation ends: its fifth and last step is never reported (speed is capa-bench's).
    const reports = [];
    const result = await client.callTool({ name: LONG, arguments: { duration: 5, steps: 5 } }, undefined, {
      timeout: 30000,
      onprogress: (p) => reports.push(p),
    });
    assert.equal(result.isError, true, JSON.stringify(result));
    const err = capabilitiesError(result);
    assert.equal(err.code, 'upstream_timeout', JSON.stringify(err));
    assert.equal(err.retryable, true, JSON.stringify(err));
    assert.ok(reports.every((r) => r.progress < 5), JSON.stringify(reports));

    // The source stays usable after the timeout.
    const echo = await client.callTool({ name: 'everything.echo', arguments: { message: 'still here' } });
    assert.equal(resultText(echo), 'Echo: still here');
  });
});
