// Secrets on a machine where no OS keychain answers (issue 41): no Secret Service on the session
// bus (the hub and the CLI run with a D-Bus address that leads nowhere), as on a minimal desktop,
// WSL or a server. `capa connections set` stores a canary with a quote, a backslash and a newline
// in the encrypted file of the data dir instead of failing with a raw zbus error; the source gets
// it in its environment; the hub says where secrets go (`/api/secrets/store`); the canary is in no file of
// the data dir in clear; after a restart of the hub the source still gets it; removing the
// connection deletes it from the file.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  startHub,
  cleanup,
  runCapa,
  capaJson,
  childrenOf,
  waitFor,
} from './support.mjs';

/** Every regular file under `dir`, recursively. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const p = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(p) : entry.isFile() ? [p] : [];
  });
}

describe('secrets without an OS keychain', () => {
  const canary = `fi"le\\canary\n${randomBytes(12).toString('hex')}`;
  let sandbox;
  let configFile;
  let hub;
  const capa = (...args) => ['--config', configFile, ...args];

  /** The upstream's CANARY, read from its process (so the value really reached it). */
  const upstreamCanary = async () => {
    const child = await waitFor('server-everything under the hub', async () =>
      childrenOf(hub.pid).find((p) => p.args.includes('server-everything')), { timeoutMs: 20000 });
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    return environ.find((e) => e.startsWith('CANARY='))?.slice('CANARY='.length);
  };

  before(async () => {
    sandbox = await makeSandbox('capa-secrets-file-');
    // A session bus that is not there: no Secret Service, so no OS keychain.
    sandbox.env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${path.join(sandbox.root, 'no-bus')}`;
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [everythingStdio({ env: { CANARY: '${secret:canary}' } })],
    });
  });

  after(async () => {
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('stores the secret in the encrypted file, and the source gets it across a restart', async () => {
    const set = await runCapa(capa('connections', 'set', 'everything', 'personal'), { env: sandbox.env, input: canary });
    assert.equal(set.code, 0, `capa connections set: ${set.stderr}`);
    assert.doesNotMatch(set.stdout + set.stderr, /zbus|org\.freedesktop/, 'a raw D-Bus error reached the person');
    const vault = path.join(sandbox.dataDir, 'secrets.vault');
    const key = path.join(sandbox.dataDir, 'secrets.key');
    for (const file of [vault, key]) assert.equal(statSync(file).mode & 0o777, 0o600, file);

    hub = await startHub({ configFile, sandbox });
    assert.deepEqual(await hub.apiJson('/api/secrets/store'), { store: 'file', file: vault });
    assert.equal(await upstreamCanary(), canary);

    // Nowhere in clear in the data dir: not the vault, not the database.
    for (const file of walk(sandbox.dataDir)) {
      assert.ok(!readFileSync(file).includes(Buffer.from(canary.slice(-24))), `the canary is in clear in ${file}`);
    }

    await hub.stop();
    hub = await startHub({ configFile, sandbox });
    assert.equal(await upstreamCanary(), canary, 'the secret was not there after a restart');

    const removed = await runCapa(capa('connections', 'remove', 'everything', 'personal'), { env: sandbox.env });
    assert.equal(removed.code, 0, removed.stderr);
    const entries = JSON.parse(readFileSync(vault, 'utf8')).entries;
    assert.deepEqual(Object.keys(entries), [], 'the removed connection stayed in the file');
    const listed = await capaJson(capa('connections', 'list', '--json'), { env: sandbox.env });
    assert.deepEqual(listed.json, []);
  });
});
