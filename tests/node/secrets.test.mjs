// Secrets: a canary stored with `capa connections set` (real OS keychain: gnome-keyring over D-Bus,
// see tests/support/with-keyring.sh) reaches the upstream server's environment, and never leaves the
// hub in clear: not in tool results, logs, files of the data dir (SQLite db and WAL as bytes), or CLI
// output.
//
// Skips itself only when there is no D-Bus session and neither CAPA_REQUIRE_ALL (set by
// scripts/test) nor CAPA_REQUIRE_KEYCHAIN is set; with either, that is a failure (require.mjs).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  filesystemStdio,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  capaJson,
  childrenOf,
} from './support.mjs';
import { KEYCHAIN, skipOrFail } from './require.mjs';

const skip = skipOrFail(
  !process.env.DBUS_SESSION_BUS_ADDRESS && 'no D-Bus session for the OS keychain: run under tests/support/with-keyring.sh',
  KEYCHAIN,
);

/** Every regular file under `dir`, recursively. */
function walk(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Files under `dir` whose bytes contain `needle` (UTF-8 and UTF-16LE, as SQLite may store either). */
function filesContaining(dir, needle) {
  const forms = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le')];
  return walk(dir).filter((f) => {
    const bytes = readFileSync(f);
    return forms.some((b) => bytes.includes(b));
  });
}

describe('secrets never leave the hub in clear', () => {
  if (skip) {
    it('needs the OS keychain', { skip }, () => {});
    return;
  }
  // A quote and a backslash: an upstream that answers JSON escapes them, and the escaped form
  // must be caught as well as the raw one.
  const canary = `ca"n\\ary-${randomBytes(16).toString('hex')}`;
  const escaped = JSON.stringify(canary).slice(1, -1);
  let sandbox;
  let configFile;
  let stateBefore;
  let setResult;
  let hub;
  let client;
  const cliOutputs = []; // {what, text}

  const capa = (...args) => ['--config', configFile, ...args];
  const assertNoCanary = (text, what) => {
    assert.ok(!String(text).includes(canary), `the canary leaked into ${what}`);
    assert.ok(!String(text).includes(escaped), `the JSON-escaped canary leaked into ${what}`);
    assert.ok(!String(text).includes(encodeURIComponent(canary)), `the URL-encoded canary leaked into ${what}`);
  };

  async function ensureHub() {
    assert.equal(setResult?.code, 0, 'the connection must be stored first (see the keychain test)');
    if (!hub) {
      hub = await startHub({ configFile, sandbox });
      client = await connectHttp(hub);
    }
    return hub;
  }

  before(async () => {
    sandbox = await makeSandbox('capa-secrets-');
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [
        everythingStdio({ env: { CANARY: '${secret:canary}', NOT_SECRET: 'plain-value' } }),
        filesystemStdio(sandbox.filesDir),
      ],
    });
    stateBefore = await capaJson(capa('sources', 'list', '--json'), { env: sandbox.env });
    setResult = await runCapa(capa('connections', 'set', 'everything', 'personal'), {
      env: sandbox.env,
      input: canary,
    });
    cliOutputs.push({ what: '`capa connections set` output', text: setResult.stdout + setResult.stderr });
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    // Leave nothing in the keychain (it may be a real user session when not run under with-keyring.sh).
    if (setResult?.code === 0) {
      const removed = await runCapa(capa('connections', 'remove', 'everything', 'personal'), { env: sandbox.env });
      assert.equal(removed.code, 0, `capa connections remove: ${removed.stderr}`);
    }
    await cleanup();
    await removeSandboxes();
  });

  it('stores the canary in the OS keychain with `capa connections set`', async () => {
    const before = stateBefore.json.find((s) => s.id === 'everything');
    assert.equal(before?.state, 'needs_connection', JSON.stringify(before));
    assert.equal(
      setResult.code,
      0,
      `\`capa connections set\` failed — is the keychain available? ` +
        `(DBUS_SESSION_BUS_ADDRESS=${process.env.DBUS_SESSION_BUS_ADDRESS ?? 'unset'})\n${setResult.stderr}`,
    );
    const conns = await capaJson(capa('connections', 'list', '--json'), { env: sandbox.env });
    cliOutputs.push({ what: '`capa connections list --json`', text: conns.stdout + conns.stderr });
    const personal = conns.json.find((c) => c.source === 'everything' && c.name === 'personal');
    assert.ok(personal, `connection listed: ${conns.stdout}`);
    assert.deepEqual(personal.fields, ['canary']);
  });

  it('the upstream gets the secret, the client sees "[redacted]" (everything.get-env)', async () => {
    await ensureHub();
    // The real value reached the upstream process (so redaction below hides something real).
    const child = childrenOf(hub.pid).find((p) => p.args.includes('server-everything'));
    assert.ok(child, 'server-everything runs as a child of the hub');
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes(`CANARY=${canary}`), 'the upstream has CANARY=<secret> in its environment');

    const result = await client.callTool({ name: 'everything.get-env', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    const raw = JSON.stringify(result);
    assertNoCanary(raw, 'the MCP result of everything.get-env');
    const env = JSON.parse(resultText(result));
    assert.equal(env.CANARY, '[redacted]');
    assert.equal(env.NOT_SECRET, 'plain-value', 'non-secret values are not redacted');

    const api = await hub.apiJson('/api/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address: 'everything.get-env', arguments: {} }),
    });
    assertNoCanary(JSON.stringify(api), 'the /api/call result of everything.get-env');
    assert.match(JSON.stringify(api), /\[redacted\]/);
  });

  it('redacts the secret when an upstream echoes it back (result and error message)', async () => {
    await ensureHub();
    const echo = await client.callTool({ name: 'everything.echo', arguments: { message: `say ${canary} twice ${canary}` } });
    assertNoCanary(JSON.stringify(echo), 'an echoed tool result');
    assert.equal(resultText(echo), 'Echo: say [redacted] twice [redacted]');

    // An upstream tool error that quotes the value (a path outside the allowed directory).
    const err = await client.callTool({
      name: 'filesystem.read_text_file',
      arguments: { path: `/nonexistent/${canary}.txt` },
    });
    assert.equal(err.isError, true, JSON.stringify(err));
    assertNoCanary(JSON.stringify(err), 'an upstream error result');
    assert.match(resultText(err), /\[redacted\]/);
  });

  it('the canary is in no log, data file or CLI output', async () => {
    await ensureHub();
    // CLI commands while the hub runs (they talk to it or read the same data dir).
    const listed = {};
    for (const what of ['sources', 'tools', 'connections']) {
      const r = await capaJson(capa(what, 'list', '--json'), { env: sandbox.env });
      cliOutputs.push({ what: `\`capa ${what} list --json\``, text: r.stdout + r.stderr });
      listed[what] = r.json;
    }
    const everything = listed.sources.find((s) => s.id === 'everything');
    assert.equal(everything?.state, 'ready', JSON.stringify(everything));
    assert.ok(listed.tools.some((t) => t.address === 'everything.get-env'));
    assert.ok(listed.connections.some((c) => c.source === 'everything' && c.name === 'personal'));
    const call = await runCapa(capa('call', 'everything.get-env', '--json', '{}'), { env: sandbox.env });
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /\[redacted\]/);
    cliOutputs.push({ what: '`capa call everything.get-env`', text: call.stdout + call.stderr });

    for (const { what, text } of cliOutputs) assertNoCanary(text, what);

    // Files while the hub runs: hub.db, hub.db-wal, hub.json, token, ...
    const files = walk(sandbox.dataDir).map((f) => path.basename(f));
    assert.ok(files.includes('hub.db'), `hub.db exists: ${files}`);
    if (existsSync(path.join(sandbox.dataDir, 'hub.db-wal'))) {
      assert.ok(statSync(path.join(sandbox.dataDir, 'hub.db-wal')).isFile());
    }
    // Control: the scan does find what is there (the token is in the token file).
    assert.deepEqual(filesContaining(sandbox.dataDir, hub.token).map((f) => path.basename(f)), ['token']);
    assert.deepEqual(filesContaining(sandbox.dataDir, canary), [], 'data files containing the canary');
    assert.deepEqual(filesContaining(sandbox.dataDir, escaped), [], 'data files containing the escaped canary');
    assert.deepEqual(filesContaining(sandbox.configDir, canary), [], 'config files containing the canary');
    assertNoCanary(hub.log(), "the hub's log (stdout and stderr)");

    // After a graceful stop (WAL checkpointed into hub.db), once more.
    await closeClient(client);
    client = undefined;
    await hub.stop();
    assert.ok(hub.proc.exitCode !== null || hub.proc.signalCode !== null, 'hub stopped');
    assert.deepEqual(filesContaining(sandbox.dataDir, canary), [], 'data files containing the canary after stop');
    assertNoCanary(hub.log(), "the hub's log after stop");
  });
});
