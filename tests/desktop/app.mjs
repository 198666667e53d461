// What the desktop tests share (desktop.test.mjs): where the app and its tools are, whether they
// are there (`skip`), and running programs beside it: one to its end, a long-running one, the
// notification server's history, another local web server, an `execute` call.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { REPO_ROOT, resultText, sleep } from '../node/support.mjs';
import { skipOrFail } from '../node/require.mjs';

export const APP = process.env.CAPA_DESKTOP_BIN
  ? path.resolve(REPO_ROOT, process.env.CAPA_DESKTOP_BIN)
  : path.join(REPO_ROOT, 'target', 'debug', 'capabilities-desktop');
export const DRIVER = process.env.WEBKIT_WEBDRIVER ?? '/usr/bin/WebKitWebDriver';
// A notification server (Debian `dunst`) on the test's display and D-Bus session.
export const DUNST = '/usr/bin/dunst';
// An XEmbed system tray (Debian `trayer`): the app's icon has somewhere to go.
export const TRAYER = '/usr/bin/trayer';
export const SCREENSHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');

export const CODE = `
await demo.write_note({ title: "doomed", text: "bye" });
const deleted = await demo.delete_note({ title: "doomed" });
return { deleted, left: await demo.list_notes({}) };
`;

const missing = [
  !existsSync(APP) && `no app binary at ${APP} (cargo build -p capabilities-desktop)`,
  !existsSync(DRIVER) && `no ${DRIVER} (apt-get install webkit2gtk-driver)`,
  !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY && 'no display (run under xvfb-run -a)',
].filter(Boolean);
// Skips when the tools are missing and the file is run by hand; under scripts/test
// (CAPA_REQUIRE_ALL) that fails, naming them.
export const skip = skipOrFail(missing);


/** Runs a program to its end; resolves {code, out, err}: `out` both streams, `err` stderr. */
export function run(bin, args, env, timeoutMs = 60000) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => {
      out += d;
      err += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(bin)} ${args.join(' ')} did not end in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** A program's standard output (its standard error ignored). */
export function output(bin, args, env) {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { env, timeout: 10000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

/** The summaries and bodies of the notifications the server received (it moves the ones still on
 * screen into its history first). */
export async function notifications(env) {
  await output('dunstctl', ['close-all'], env);
  const history = JSON.parse(await output('dunstctl', ['history'], env));
  return history.data.flat().map((n) => ({ summary: n.summary.data, body: n.body.data }));
}

/** Whether process `pid` is alive. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Ends the app (or hub) that serves `dataDir`, found through its discovery file: SIGTERM, and
 * SIGKILL if it is still there 10 s later. Nothing when none runs. */
export async function endHubOf(dataDir) {
  const discovery = path.join(dataDir, 'hub.json');
  if (!existsSync(discovery)) return;
  const { pid } = JSON.parse(await readFile(discovery, 'utf8'));
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10000;
  while (alive(pid) && Date.now() < deadline) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/** Starts a long-running process; `stop()` ends it. */
export function start(bin, args, env) {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (log += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (log += d));
  return {
    child,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const deadline = Date.now() + 5000;
      while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) await sleep(50);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** A web server on another loopback port: what a local program other than the hub could serve.
 * Records every request it gets. */
export async function otherServer() {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>other</title><p id="other">another local server</p>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export async function execute(client, args) {
  const result = await client.callTool({ name: 'execute', arguments: args });
  assert.ok(result.structuredContent, `no envelope: ${resultText(result)}`);
  return result.structuredContent;
}

/** Takes the desktop tests' lock: one app at a time on a display and D-Bus session (the app is a
 * single instance there: a second one hands over to the first and exits), whatever the test
 * runner's concurrency. Resolves the function that releases it. A lock left by a test process
 * that died is taken after 15 minutes. */
export async function desktopLock() {
  const lock = path.join(os.tmpdir(), `capa-desktop-e2e-${(process.env.DISPLAY ?? 'none').replace(/[^\w]/g, '_')}.lock`);
  const deadline = Date.now() + 15 * 60 * 1000;
  for (;;) {
    try {
      await mkdir(lock);
      return () => rm(lock, { recursive: true, force: true });
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > 15 * 60 * 1000 || Date.now() > deadline) await rm(lock, { recursive: true, force: true });
      await sleep(200);
    }
  }
}

/** Starts an Xvfb display of its own (the number it picks itself) with openbox managing it, for
 * tests that need a real window manager; resolves `{ display, env, stop() }`, `env` being `base`
 * with that DISPLAY. */
export async function ownDisplay(base) {
  // Once more on a fresh display when the first is gone before openbox reaches it: a display
  // number freed by another Xvfb of this run can lose its socket to that Xvfb's exit after
  // this one made it (seen in CI twice: "openbox did not manage :0").
  try {
    return await ownDisplayOnce(base);
  } catch (e) {
    console.error(`${e.message}; trying a new display`);
    return ownDisplayOnce(base);
  }
}

async function ownDisplayOnce(base) {
  const child = await new Promise((resolve, reject) => {
    const xvfb = spawn('/usr/bin/Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let number = '';
    xvfb.stdio[3].setEncoding('utf8').on('data', (d) => {
      number += d;
      if (number.includes('\n')) resolve(Object.assign(xvfb, { number: number.trim() }));
    });
    xvfb.once('exit', (code) => reject(new Error(`Xvfb exited (${code}) before it said its display`)));
  });
  const display = `:${child.number}`;
  const env = { ...base, DISPLAY: display };
  const wm = start('/usr/bin/openbox', [], env);
  const deadline = Date.now() + 20000;
  while (!(await output('/usr/bin/xprop', ['-root', '_NET_SUPPORTING_WM_CHECK'], env).catch(() => '')).includes('window id')) {
    if (Date.now() > deadline) {
      // Nothing left running: a live Xvfb would keep the test file's process from ever ending.
      await wm.stop();
      const gone = new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
      child.kill('SIGKILL');
      await gone;
      throw new Error(`openbox did not manage ${display}: ${wm.log()}`);
    }
    await sleep(100);
  }
  return {
    display,
    env,
    async stop() {
      await wm.stop();
      // Waited for: an Xvfb still exiting unlinks its socket under the same number after the
      // next test's Xvfb (which picks the first free number) has made it, and that display is
      // gone before anything connects (seen in CI: "openbox did not manage :0").
      const exited = new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
