// A team hub's replicas on one PostgreSQL database behind HAProxy (docs/team.md), for the tests
// that run them: tests/node/team-haproxy.test.mjs and tests/node/team-chaos.test.mjs.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
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
  stopProcess,
  trackPid,
} from './support.mjs';
import { skipOrFail } from './require.mjs';
import { SERVER, dropDatabases } from './postgres-support.mjs';

export const HAPROXY = spawnSync('haproxy', ['-v']).status === 0;
/** Why the tests of replicas behind HAProxy cannot run here (`false` when they can). */
export const haproxySkip = () => skipOrFail([
  SERVER ? null : 'CAPA_TEST_POSTGRES is not set (eval "$(tests/support/postgres.sh start)" starts a server)',
  HAPROXY ? null : 'haproxy is not installed (apt-get install haproxy; scripts/setup --test does)',
]);

/**
 * A sandbox whose hub keeps its data in `store` (code mode, the demo and `servers`);
 * `configDir` shared when given (one policy for every replica).
 */
export async function teamSandbox(prefix, store, configDir, servers = []) {
  const sandbox = await makeSandbox(prefix);
  if (configDir) {
    sandbox.configDir = configDir;
    sandbox.env.CAPA_CONFIG_DIR = configDir;
  }
  sandbox.env.CAPA_NO_BROWSER = '1';
  sandbox.env.CAPA_STORE = store;
  const configFile = await writeCapabilities(sandbox.configDir, { servers, options: { demo: true, toolExposure: 'code' } });
  return { sandbox, configFile };
}

/** A replica of the hub at `store`, started (as {@link teamSandbox} says). */
export async function replica(prefix, store, configDir, servers = []) {
  const { sandbox, configFile } = await teamSandbox(prefix, store, configDir, servers);
  const hub = await startHub({ configFile, sandbox });
  return { sandbox, configFile, hub };
}

/** An `after` hook: runs `stop` (latest first), then drops the databases and sandboxes. */
export function stopAll(stop) {
  return async () => {
    for (const s of stop.reverse()) await s();
    dropDatabases();
    await cleanup();
    await removeSandboxes();
  };
}

/** HAProxy with docs/team-haproxy.cfg in front of `a` and `b`; resolves once it serves. */
export async function startHaproxy(a, b, token) {
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

/** A 2025-era client (TS SDK 1.x, a session) through `url`. */
export async function v1(url, token) {
  const client = new Client({ name: 'e2e-lb-v1', version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** A 2026-07-28 client (TS SDK 2.x, no session) through `url`. */
export async function v2(url, token) {
  const client = new ClientV2(
    { name: 'e2e-lb-v2', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new HttpV2(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** `execute` with `args`; its envelope. */
export async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, JSON.stringify(result));
  return result.structuredContent;
}

/** Starts `r`'s hub again, on the address it had (HAProxy knows it by that), after it died. */
export async function restart(r) {
  r.hub = await startHub({ configFile: r.configFile, sandbox: r.sandbox, http: new URL(r.hub.url).host });
  return r.hub;
}
