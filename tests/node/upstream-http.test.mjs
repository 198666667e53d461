// A Streamable HTTP upstream, called many times in a row from guest code: the hub keeps its
// connection to the upstream between calls (issue 42, "the HTTP client keeps idle connections")
// instead of opening one per request, and a call after the idle connection was let go still
// works. The upstream is tests/fixtures/ledger-server.mjs (TS SDK 1.x, stateless), which counts
// the TCP connections it accepted.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  connectStdio,
  closeClient,
  cleanup,
  startLedger,
} from './support.mjs';

const CALLS = 30;

describe('a Streamable HTTP upstream called many times', () => {
  let sandbox;
  let ledger;
  let conn;

  before(async () => {
    sandbox = await makeSandbox('capa-upstream-http-');
    ledger = await startLedger();
    const configFile = await writeCapabilities(sandbox.configDir, {
      servers: [{ id: 'ledger', url: ledger.url }],
      options: { toolExposure: 'code', search: { semantic: 'off' } },
    });
    conn = await connectStdio({ configFile, sandbox });
  });

  after(async () => {
    await closeClient(conn);
    await ledger?.stop();
    await cleanup();
    await removeSandboxes();
  });

  const appendMany = async (prefix) => {
    const result = await conn.client.callTool({
      name: 'execute',
      arguments: {
        code: `let n = 0; for (let i = 0; i < ${CALLS}; i++) { n += (await ledger.append({ key: '${prefix}' + i })).count; } return n;`,
      },
    });
    const envelope = result.structuredContent;
    assert.equal(envelope.status, 'completed', `${JSON.stringify(envelope)}\n${conn.stderr()}`);
    assert.equal(envelope.result, CALLS);
  };

  it('keeps one connection for a run of calls, and opens a new one after it was let go', async () => {
    const before = await ledger.connections();
    await appendMany('a');
    const during = (await ledger.connections()) - before;
    // Keep-alive: the calls of the run share a connection (one more may open if a call raced
    // the previous answer's end). Without it, each call is a connection of its own.
    assert.ok(during <= 2, `${CALLS} calls opened ${during} connections`);

    // The hub lets an idle connection go after 4 s (before servers close theirs, after 5 s);
    // the next calls open a new one and succeed.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    await appendMany('b');
    const after = (await ledger.connections()) - before - during;
    assert.ok(after >= 1 && after <= 2, `after the idle time, ${CALLS} calls opened ${after} connections`);
    const counts = await ledger.counts();
    assert.equal(Object.keys(counts).length, 2 * CALLS);
    assert.ok(Object.values(counts).every((n) => n === 1), 'each call reached the upstream once');
  });
});
