// Shared helpers for the end-to-end tests: real hub binary, real upstream MCP servers, real clients.
// Every test gets fresh temp dirs (CAPA_DATA_DIR, CAPA_CONFIG_DIR), and every process a test starts is
// recorded here so that `cleanup()` (called from `after` hooks) can stop it and its descendants.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep, waitFor } from './wait.mjs';
import { forwardedLink } from './browser-support.mjs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

export { sleep, waitFor };
export { fakeBrowser, forwardedLink, signInOnAnotherDevice } from './browser-support.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CAPA_BIN = process.env.CAPA_BIN
  ? path.resolve(REPO_ROOT, process.env.CAPA_BIN)
  : path.join(REPO_ROOT, 'target', 'debug', 'capa');
export const NODE_MODULES = path.join(REPO_ROOT, 'node_modules');
export const EVERYTHING_JS = path.join(
  NODE_MODULES, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM_JS = path.join(
  NODE_MODULES, '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
// Upstream servers run on the same Node that runs the tests.
export const NODE = process.execPath;
/** The search model scripts/setup installs; scripts/test leaves CAPA_MODEL_DIR unset, so that
 * only the tests that ask for it load the model (docs/testing.md). */
export const MODEL_DIR = process.env.CAPA_MODEL_DIR ?? path.join(REPO_ROOT, 'models', 'all-MiniLM-L6-v2');

/** Debian's Chromium, which the UI's browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Why the UI's browser tests cannot run here (no Chromium, a `capa` without `capa ui`, the UI not
 * built), or null; for `skipOrFail` (require.mjs).
 */
export function uiMissing() {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM}: install it with \`apt-get install chromium\` (or \`scripts/setup --test\`)`;
  const ui = spawnSync(CAPA_BIN, ['ui', '--help'], { encoding: 'utf8' });
  if (ui.status !== 0) return `this capa binary has no \`capa ui\` command (cargo build?): ${ui.stderr.trim().split('\n')[0]}`;
  if (!existsSync(path.join(REPO_ROOT, 'ui', 'dist', 'index.html'))) return 'the UI is not built: run `npm run build:ui`';
  return null;
}

if (!existsSync(CAPA_BIN)) {
  throw new Error(`hub binary not found at ${CAPA_BIN}: run \`cargo build\` first or set CAPA_BIN`);
}

// ---------------------------------------------------------------------------------------------------
// Process bookkeeping

const started = new Set(); // ChildProcess objects started by helpers
const extraPids = new Set(); // pids learnt later (children of the hub) to make sure they are gone

/** Whether a process with this pid exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** All processes as {pid, ppid, args}. */
export function processTable() {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.match(/^\s*(\d+)\s+(\d+)\s+(.*)$/))
    .filter(Boolean)
    .map(([, pid, ppid, args]) => ({ pid: Number(pid), ppid: Number(ppid), args }));
}

/** Descendants of `pid` (children, grandchildren, ...), from `ps`. */
export function descendants(pid, table = processTable()) {
  const result = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift();
    for (const p of table) {
      if (p.ppid === parent) {
        result.push(p);
        queue.push(p.pid);
      }
    }
  }
  return result;
}

/** Direct children of `pid`. */
export function childrenOf(pid) {
  return processTable().filter((p) => p.ppid === pid);
}

/** Remember a process started indirectly (e.g. by the hub) so cleanup kills it if it survives. */
export function trackPid(pid) {
  if (pid) extraPids.add(pid);
}

function track(child) {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

export async function waitForExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Stop a process gracefully (SIGTERM, then SIGKILL after `graceMs`), and make sure its descendants
 * (upstream servers started by the hub) are gone too.
 */
export async function stopProcess(child, { graceMs = 5000 } = {}) {
  if (!child || child.pid === undefined) return;
  let tree = [];
  try {
    tree = descendants(child.pid);
  } catch {}
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, graceMs))) {
      child.kill('SIGKILL');
      await waitForExit(child, 2000);
    }
  }
  // Give the hub's children a moment to go away on their own, then make sure.
  const deadline = Date.now() + 2000;
  while (tree.some((p) => alive(p.pid)) && Date.now() < deadline) await sleep(50);
  for (const p of tree) {
    if (alive(p.pid)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {}
    }
  }
}

/** Kill everything the helpers started that is still running; for `after` hooks. */
export async function cleanup() {
  await Promise.all([...started].map((c) => stopProcess(c)));
  for (const pid of extraPids) {
    if (alive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }
  extraPids.clear();
}

// ---------------------------------------------------------------------------------------------------
// Temp dirs and config

const tempRoots = [];

/**
 * Fresh, private dirs for one test: {root, dataDir, configDir, filesDir, env}.
 * `env` is process.env plus CAPA_DATA_DIR/CAPA_CONFIG_DIR pointing at them.
 */
export async function makeSandbox(prefix = 'capa-e2e-') {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  tempRoots.push(root);
  const dataDir = path.join(root, 'data');
  const configDir = path.join(root, 'config');
  const filesDir = path.join(root, 'files');
  await Promise.all([mkdir(dataDir), mkdir(configDir), mkdir(filesDir)]);
  const env = {
    ...process.env,
    CAPA_DATA_DIR: dataDir,
    CAPA_CONFIG_DIR: configDir,
    RUST_BACKTRACE: '1',
  };
  return { root, dataDir, configDir, filesDir, env };
}

export async function removeSandboxes() {
  const roots = tempRoots.splice(0);
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
}

/** A JSON/YAML-safe scalar (JSON strings are valid YAML flow scalars). */
const y = (s) => JSON.stringify(s);

/**
 * Write a capabilities file. `servers` is a list of
 *   {id, command, args, env} (stdio) or {id, url} (Streamable HTTP);
 * `options` is written verbatim as a YAML flow mapping.
 */
export async function writeCapabilities(dir, { servers = [], options } = {}, name = 'capabilities.yaml') {
  const lines = [];
  if (options) lines.push(`options: ${JSON.stringify(options)}`);
  lines.push(servers.length ? 'servers:' : 'servers: []');
  for (const s of servers) {
    lines.push(`  - id: ${s.id}`, '    type: mcp', ...(s.namespace === undefined ? [] : [`    namespace: ${s.namespace}`]), '    def:');
    if (s.url) {
      lines.push(`      url: ${y(s.url)}`);
    } else {
      lines.push(`      command: ${y(s.command)}`);
      lines.push(`      args: [${(s.args ?? []).map(y).join(', ')}]`);
      if (s.env) {
        lines.push('      env:');
        for (const [k, v] of Object.entries(s.env)) lines.push(`        ${k}: ${y(v)}`);
      }
    }
  }
  const file = path.join(dir, name);
  await writeFile(file, lines.join('\n') + '\n');
  return file;
}

export const everythingStdio = (extra = {}) => ({
  id: 'everything',
  command: NODE,
  args: [EVERYTHING_JS, 'stdio'],
  ...extra,
});

export const filesystemStdio = (dir, extra = {}) => ({
  id: 'filesystem',
  command: NODE,
  args: [FILESYSTEM_JS, dir],
  ...extra,
});

// ---------------------------------------------------------------------------------------------------
// Running the CLI

/** A shell word: `'…'` with inner quotes escaped. */
const shellWord = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

/**
 * Run `capa ...args`; resolves {code, signal, stdout, stderr}. `terminal: true` runs it as a
 * person at a terminal (util-linux `script` gives it a pseudo-terminal; its output is all in
 * stdout): decisions are refused without one, since an agent's shell has none.
 */
export function runCapa(args, { env, input, timeoutMs = 30000, terminal = false } = {}) {
  return new Promise((resolve, reject) => {
    const [program, argv] = terminal
      ? ['script', ['-qec', [CAPA_BIN, ...args].map(shellWord).join(' '), '/dev/null']]
      : [CAPA_BIN, args];
    const child = track(
      spawn(program, argv, { env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`capa ${args.join(' ')} timed out after ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (input !== undefined) {
      child.stdin.on('error', () => {}); // EPIPE when the program does not read stdin
      child.stdin.end(input);
    }
  });
}

/** Run `capa ...args` and parse its stdout as JSON; fails on a non-zero exit. */
export async function capaJson(args, opts) {
  const r = await runCapa(args, opts);
  if (r.code !== 0) throw new Error(`capa ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return { ...r, json: JSON.parse(r.stdout) };
}

// ---------------------------------------------------------------------------------------------------
// The hub over HTTP

/**
 * Start `capa --config FILE hub serve --http <http, default 127.0.0.1:0>`; wait for hub.json.
 * Returns {proc, pid, url, mcpUrl, token, log(), api(path, init), stop()}.
 */
export async function startHub({ configFile, sandbox, waitReady = true, http = '127.0.0.1:0' }) {
  const hubJson = path.join(sandbox.dataDir, 'hub.json');
  const proc = track(
    spawn(CAPA_BIN, ['--config', configFile, 'hub', 'serve', '--http', http], {
      env: sandbox.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let log = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (log += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (log += d));
  let exited = false;
  proc.once('exit', () => (exited = true));

  const info = await waitFor('hub.json', async () => {
    if (exited) throw Object.assign(new Error(`hub exited early (code ${proc.exitCode}):\n${log}`), { fatal: true });
    if (!existsSync(hubJson)) return null;
    const text = await readFile(hubJson, 'utf8');
    const j = JSON.parse(text);
    return j.pid === proc.pid && j.url ? j : null;
  }).catch(async (e) => {
    await stopProcess(proc);
    throw e;
  });
  const token = (await readFile(path.join(sandbox.dataDir, 'token'), 'utf8')).trim();
  const hub = {
    proc,
    pid: info.pid,
    url: info.url,
    mcpUrl: `${info.url}/mcp`,
    token,
    info,
    log: () => log,
    api: (p, init = {}) =>
      fetch(`${info.url}${p}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) },
      }),
    async apiJson(p, init) {
      const res = await hub.api(p, init);
      const body = await res.text();
      if (!res.ok) throw new Error(`${p}: HTTP ${res.status}: ${body}`);
      return JSON.parse(body);
    },
    stop: () => stopProcess(proc),
  };
  if (waitReady) await waitForSourcesReady(hub);
  return hub;
}

/** Poll /api/sources until every source (or those in `ids`) is `ready`. */
export async function waitForSourcesReady(hub, ids, timeoutMs = 20000) {
  return waitFor(
    `sources ${ids ? ids.join(', ') : '(all)'} ready`,
    async () => {
      const sources = await hub.apiJson('/api/sources');
      const wanted = ids ? sources.filter((s) => ids.includes(s.id)) : sources;
      if (ids && wanted.length !== ids.length) return null;
      return wanted.every((s) => s.state === 'ready') ? sources : null;
    },
    { timeoutMs },
  );
}

/** A connected TS SDK client over Streamable HTTP with the hub's bearer token. */
export async function connectHttp(hub, { name = 'e2e-http', path = '/mcp' } = {}) {
  // `hub` may be only {mcpUrl, token} (the desktop tests'); a profile's path replaces `/mcp`.
  const url = hub.mcpUrl.replace(/\/mcp$/, path);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${hub.token}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/**
 * A connected TS SDK client over stdio, spawning `capa --config FILE mcp`.
 * Returns {client, transport, stderr()}; `client.close()` stops the child.
 */
export async function connectStdio({ configFile, sandbox, name = 'e2e-stdio', mcpArgs = [], capabilities }) {
  const transport = new StdioClientTransport({
    command: CAPA_BIN,
    args: ['--config', configFile, 'mcp', ...mcpArgs],
    env: sandbox.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.setEncoding('utf8').on('data', (d) => (stderr += d));
  const client = new Client({ name, version: '1.0.0' }, capabilities ? { capabilities } : undefined);
  await client.connect(transport);
  trackPid(transport.pid);
  return { client, transport, stderr: () => stderr };
}

/** Close an SDK client and make sure a stdio child (and its children) is gone. */
export async function closeClient(c) {
  if (!c) return;
  const client = c.client ?? c;
  const pid = c.transport?.pid;
  const tree = pid ? descendants(pid) : [];
  // Over HTTP, end the session on the hub (DELETE) rather than just dropping it.
  const transport = client.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    try {
      await transport.terminateSession();
    } catch {}
  }
  try {
    await client.close();
  } catch {}
  for (const p of [...tree.map((t) => t.pid), pid].filter(Boolean)) {
    const deadline = Date.now() + 3000;
    while (alive(p) && Date.now() < deadline) await sleep(50);
    if (alive(p)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
    }
  }
}

/**
 * How many `notifications/tools/list_changed` a connected client receives in `ms` while nobody changes
 * anything.
 */
export async function countListChanged(client, ms = 1000) {
  let count = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++;
  });
  await sleep(ms);
  client.removeNotificationHandler('notifications/tools/list_changed');
  return count;
}

/**
 * Call a tool that does not exist. The hub answers with a tool result, not a JSON-RPC error, so
 * that the model reads the closest tool names and corrects itself (docs/architecture.md).
 */
export async function unknownToolResult(client, name) {
  return client.callTool({ name, arguments: {} });
}

/** The concatenated text of a tool result's text content. */
export function resultText(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/** A free TCP port on 127.0.0.1 (closed again before returning). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Start server-everything as a Streamable HTTP server (it reads its port from env PORT) and wait
 * until it listens. Returns {proc, url, stop()}.
 */
export async function startEverythingHttp() {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = track(
      spawn(NODE, [EVERYTHING_JS, 'streamableHttp'], {
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let log = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => (log += d));
    proc.stderr.setEncoding('utf8').on('data', (d) => (log += d));
    try {
      await waitFor('server-everything (streamableHttp) to listen', () => {
        if (proc.exitCode !== null) throw new Error(`exited: ${log}`);
        return log.includes(`listening on port ${port}`);
      }, { timeoutMs: 15000 });
      return { proc, port, url: `http://127.0.0.1:${port}/mcp`, log: () => log, stop: () => stopProcess(proc) };
    } catch (e) {
      await stopProcess(proc);
      if (attempt >= 2) throw e;
    }
  }
}

/**
 * Starts a node script of tests/fixtures and waits until its output matches `ready`; resolves
 * {proc, found (the pattern's first group), log(), stop()}. Stopped by `cleanup` if a test
 * does not.
 */
export async function startFixture(script, what, ready) {
  const proc = track(spawn(NODE, [path.join(REPO_ROOT, 'tests', 'fixtures', script)], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let log = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (log += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (log += d));
  const found = await waitFor(`${what} to listen`, () => {
    if (proc.exitCode !== null) throw new Error(`exited: ${log}`);
    return ready.exec(log)?.[1];
  }, { timeoutMs: 15000 }).catch(async (e) => {
    await stopProcess(proc);
    throw e;
  });
  return { proc, found, log: () => log, stop: () => stopProcess(proc) };
}

/**
 * The counting upstream (tests/fixtures/ledger-server.mjs) on a free port: `url` for a
 * capabilities file, `counts()` for what reached it (`{ "append:<key>": n, ... }`).
 */
export async function startLedger() {
  const { proc, found: port, log, stop } = await startFixture('ledger-server.mjs', 'the ledger upstream', /listening on port (\d+)/);
  const base = `http://127.0.0.1:${port}`;
  return {
    proc,
    url: `${base}/mcp`,
    log,
    counts: async () => (await fetch(`${base}/counts`)).json(),
    /** TCP connections that carried an MCP request to the ledger so far. */
    connections: async () => (await fetch(`${base}/connections`)).json().then((c) => c.mcp),
    stop,
  };
}

/** A raw HTTP request with full control over headers (fetch does not let you set Host). */
export function rawRequest(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
      },
    );
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error('request timed out')));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A minimal MCP initialize request body (for raw HTTP checks). */
export const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw-e2e', version: '1.0.0' },
  },
});

/** Signs `page` in as a person does: `capa <capaArgs>` (`--config F ui`) opens the fake browser
 * of `fakeBrowser` (`opened`) on a forwarding page, which `page` loads; the caller waits on it. */
export async function signInWithCapaUi(page, { capaArgs, env, opened }) {
  const before = (await opened.opened()).length;
  const ran = await runCapa(capaArgs, { env });
  if (ran.code !== 0) throw new Error(`capa ui exited ${ran.code}: ${ran.stderr}`);
  const argument = await waitFor('capa ui to open the browser', async () => (await opened.opened())[before]);
  await forwardedLink(argument);
  await page.goto(argument);
}

/**
 * Starts the OAuth test upstream (tests/support/oauth-server.mjs) with `args` and reads the line
 * it prints once it listens. Returns {mcpUrl, issuer, adminUrl, proc, output()}.
 */
export async function startOAuthServer(args = []) {
  const script = path.join(REPO_ROOT, 'tests', 'support', 'oauth-server.mjs');
  const proc = track(spawn(NODE, [script, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const info = await waitFor('the OAuth test server to listen', () => {
    if (proc.exitCode !== null) throw new Error(`oauth-server.mjs exited ${proc.exitCode}: ${err}`);
    const line = out.split('\n').find((l) => l.startsWith('{'));
    return line ? JSON.parse(line) : null;
  }).catch(async (e) => {
    await stopProcess(proc);
    throw e;
  });
  return { ...info, proc, output: () => out + err };
}
