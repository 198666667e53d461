// A client that cancels an `execute` (`notifications/cancelled`, through an AbortSignal) or goes
// away stops the run: queued calls never start, the run is recorded `cancelled`, and a later
// `resume` says so. The demo's notes file is the counter: each loop turn writes one note after a
// one-second upstream call (server-everything's trigger-long-running-operation), so a run that
// went on after the cancel would keep adding notes.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPV2 } from '@modelcontextprotocol/client';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  connectHttp,
  connectStdio,
  closeClient,
  cleanup,
  sleep,
} from './support.mjs';

const LOOP = `
for (let i = 0; i < 30; i++) {
  await everything.trigger_long_running_operation({ duration: 1, steps: 1 });
  await demo.write_note({ title: "turn-" + i, text: "x" });
}
return "finished";
`;

describe('a cancelled execute stops its run', () => {
  let sandbox;
  let hub;
  let configFile;

  before(async () => {
    sandbox = await makeSandbox('capa-cancel-');
    configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: true, toolExposure: 'code' },
      servers: [everythingStdio()],
    });
    hub = await startHub({ configFile, sandbox });
  });

  after(async () => {
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  /** The notes the run wrote so far (the demo keeps them in the data dir). */
  async function turns() {
    try {
      const notes = JSON.parse(await readFile(path.join(sandbox.dataDir, 'demo-notes.json'), 'utf8'));
      const titles = Array.isArray(notes) ? notes.map((n) => n.title) : Object.keys(notes);
      return titles.filter((t) => String(t).startsWith('turn-')).length;
    } catch {
      return 0;
    }
  }

  /** Cancels `start(signal)` after 2.5 s; then no turn may follow, and resume says `cancelled`. */
  async function cancelAndCheck(client, start, what) {
    const before = await turns();
    const controller = new AbortController();
    const running = start(controller.signal).catch((e) => e);
    await sleep(2500);
    controller.abort();
    const outcome = await running;
    assert.ok(outcome instanceof Error, `${what}: the aborted call rejects (${JSON.stringify(outcome)})`);
    // Let a call that was in flight finish its turn, then nothing more may come.
    await sleep(1500);
    const atCancel = await turns();
    assert.ok(atCancel - before <= 3, `${what}: ${atCancel - before} turns ran before the cancel`);
    await sleep(2500);
    assert.equal(await turns(), atCancel, `${what}: the run went on after the cancel`);
    return atCancel;
  }

  async function lastRun() {
    const runs = await hub.apiJson('/api/runs?limit=1');
    return (runs.runs ?? runs)[0];
  }

  it('with a 2025-11-25 session (notifications/cancelled)', async () => {
    const client = await connectHttp(hub, { name: 'cancel-v1' });
    try {
      await cancelAndCheck(
        client,
        (signal) => client.callTool({ name: 'execute', arguments: { code: LOOP } }, undefined, { signal, timeout: 60000 }),
        'TS SDK v1',
      );
      const run = await lastRun();
      assert.equal(run.status, 'cancelled', JSON.stringify(run));
      const resumed = await client.callTool({ name: 'execute', arguments: { resume: run.id } });
      assert.equal(resumed.structuredContent.status, 'cancelled', JSON.stringify(resumed.structuredContent));
      assert.equal(resumed.structuredContent.error.code, 'cancelled');
    } finally {
      await closeClient(client);
    }
  });

  it('with a 2026-07-28 client (the request goes away)', async () => {
    const client = new ClientV2({ name: 'cancel-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPV2(new URL(hub.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
    });
    await client.connect(transport);
    try {
      await cancelAndCheck(
        client,
        (signal) => client.callTool({ name: 'execute', arguments: { code: LOOP } }, { signal, timeout: 60000 }),
        'TS SDK v2',
      );
      const run = await lastRun();
      assert.equal(run.status, 'cancelled', JSON.stringify(run));
    } finally {
      await client.close().catch(() => {});
    }
  });

  it('through `capa mcp` forwarding to the running hub', async () => {
    const conn = await connectStdio({ configFile, sandbox, name: 'cancel-bridge' });
    try {
      await cancelAndCheck(
        conn.client,
        (signal) => conn.client.callTool({ name: 'execute', arguments: { code: LOOP } }, undefined, { signal, timeout: 60000 }),
        'capa mcp bridge',
      );
      const run = await lastRun();
      assert.equal(run.status, 'cancelled', JSON.stringify(run));
    } finally {
      await closeClient(conn);
    }
  });
});
