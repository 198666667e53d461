// The client that the MCP conformance suite (0.2, client auth scenarios) runs: the hub's upstream
// OAuth client, driven through the `capa` CLI as a person would (tests/conformance/auth-client.sh).
//
//   node auth-client-cmd.mjs <server-url>          what the suite runs (it appends the URL and sets
//                                                  MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT)
//   node auth-client-cmd.mjs --browser <file-url>  the CAPA_BROWSER this sets: a browser without a
//                                                  person, see `browse` below
//
// For one scenario it:
//   1. makes fresh temp dirs and re-runs itself in a private keyring session
//      (tests/support/with-keyring.sh, its own HOME): tokens live in the OS keychain under
//      `<source>/<connection>`, the same name in every scenario, and the suite's fake servers
//      accept any `test-token…`, so a token left over from the previous scenario would skip the
//      sign-in being tested;
//   2. writes the global capabilities file ($CAPA_CONFIG_DIR/capabilities.yaml) with one HTTP
//      source `conf` at the suite's URL and `oauth: true`; `auth/pre-registration` gets its
//      pre-registered client from MCP_CONFORMANCE_CONTEXT as `oauth: {clientId, clientSecret}`,
//      `auth/basic-cimd` the suite's client metadata URL as `oauth: {clientMetadataUrl}` (each
//      only if this capa's file format accepts it);
//   3. runs `capa connections login conf` with CAPA_BROWSER set to this file's browser mode;
//   4. calls the scenario server's one tool: `capa call conf.test-tool --json '{}' --raw` (a hub
//      started in that process connects the source: discovery or initialize, tools/list, then
//      tools/call). When the call says the source needs a sign-in again (a step-up 403, a new
//      authorization server), it signs in again and calls again: 3 sign-ins at most, the suite's
//      own retry limit (auth/scope-retry-limit).
//
// Environment: CAPA_BIN (default target/debug/capa), AUTH_CLIENT_BUDGET_MS (what the whole run may
// take, default 100000; auth-client.sh sets it below the suite's timeout so this ends first and
// kills what it started), CONFORMANCE_KEEP=1 keeps the temp dir (its path is printed).
// Everything goes to stderr, which the suite keeps as stderr.txt in the scenario's result dir.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), '..', '..');
const CAPA_BIN = process.env.CAPA_BIN ? path.resolve(ROOT, process.env.CAPA_BIN) : path.join(ROOT, 'target', 'debug', 'capa');
const SOURCE = 'conf';
const TOOL = 'test-tool'; // the one tool of every auth scenario's MCP server
const MAX_SIGN_INS = 3;
/** The client id the suite's `auth/basic-cimd` expects (its CIMD_CLIENT_METADATA_URL). */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const started = Date.now();
const budgetMs = Number(process.env.AUTH_CLIENT_BUDGET_MS) || 100_000;

const log = (line) => process.stderr.write(`[auth-client] ${line}\n`);
let browserLogShown = 0; // how much of the browser's log is already on stderr

// ---------------------------------------------------------------------------------------------
// Outer: temp dirs and a private keyring session.

async function outer(url) {
  if (!url || !/^https?:\/\//.test(url)) {
    log(`usage: node auth-client-cmd.mjs <server-url>; got ${JSON.stringify(url)}`);
    return 2;
  }
  if (!existsSync(CAPA_BIN)) {
    log(`hub binary not found at ${CAPA_BIN}: run \`cargo build\` first or set CAPA_BIN`);
    return 2;
  }
  const tmp = mkdtempSync(path.join(process.env.TMPDIR || os.tmpdir(), 'capa-auth-client.'));
  const env = {
    ...process.env,
    CAPA_AUTH_CLIENT_INNER: '1',
    CAPA_AUTH_CLIENT_TMP: tmp,
    CAPA_TEST_KEYRING_HOME: path.join(tmp, 'keyring'),
  };
  // A session of its own even when auth-client.sh runs inside scripts/test's keyring session.
  delete env.CAPA_KEYRING_SESSION;
  mkdirSync(env.CAPA_TEST_KEYRING_HOME, { mode: 0o700 });
  const child = spawn('bash', [path.join(ROOT, 'tests', 'support', 'with-keyring.sh'), process.execPath, SELF, url], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true, // its own process group, so that a stop reaches dbus-run-session's children too
  });
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {}
  };
  // The suite stops a client that overruns with SIGTERM to the shell it started.
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 2000).unref();
    });
  }
  const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  killGroup('SIGKILL'); // a gnome-keyring-daemon left in the group
  if (process.env.CONFORMANCE_KEEP === '1') log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
  return code;
}

// ---------------------------------------------------------------------------------------------
// Inner: sign in, then call the tool, as a person at a terminal would.

async function inner(url) {
  const tmp = process.env.CAPA_AUTH_CLIENT_TMP;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO || '(unknown)';
  const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT);
  if (/\s/.test(process.execPath + SELF)) {
    log(`CAPA_BROWSER is split on spaces, and the path of node or of this file has one (${process.execPath}, ${SELF}): run from a path without spaces`);
    return 2;
  }
  const dataDir = path.join(tmp, 'data');
  const configDir = path.join(tmp, 'config');
  const browserLog = path.join(tmp, 'browser.log');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const env = {
    ...process.env,
    CAPA_DATA_DIR: dataDir,
    CAPA_CONFIG_DIR: configDir,
    CAPA_BROWSER: `${process.execPath} ${SELF} --browser`,
    AUTH_CLIENT_BROWSER_LOG: browserLog,
  };
  delete env.BROWSER;
  log(`scenario ${scenario}, server ${url}, temp dir ${tmp}`);
  if (!scenario.startsWith('auth/')) return useTheSource(url, configDir, env);

  const oauth = {};
  if (context?.client_id) oauth.clientId = context.client_id;
  // Settings this hub's file format may not have yet: each is tried with `capa config check` and
  // dropped (with a note) when refused, so the scenario then fails on what it tests rather than
  // the whole run failing on a file the hub does not read.
  const optional = {};
  // auth/pre-registration: the pre-registered client's secret (client_secret_basic), kept in
  // the keychain as field `client_secret` of the connection and named in the file.
  if (context?.client_secret) optional.clientSecret = '${secret:client_secret}';
  // auth/basic-cimd: a hub that uses Client ID Metadata Documents needs the https URL of the
  // document it publishes; the suite's authorization server takes this fixed one as is.
  if (scenario === 'auth/basic-cimd') optional.clientMetadataUrl = CIMD_URL;
  const file = path.join(configDir, 'capabilities.yaml');
  for (const [key, value] of Object.entries(optional)) {
    writeFileSync(file, capabilitiesYaml(url, { ...oauth, [key]: value }));
    const check = await capa(['config', 'check', file], env, 20_000);
    if (check.code === 0) oauth[key] = value;
    else log(`this capa does not accept \`oauth.${key}\`; going on without it`);
  }
  writeFileSync(file, capabilitiesYaml(url, oauth));
  if (oauth.clientSecret) {
    const stored = await capa(
      ['connections', 'set', SOURCE, 'personal', '--field', 'client_secret'],
      env,
      20_000,
      { input: context.client_secret },
    );
    if (stored.code !== 0) log('could not store the client secret; going on without it');
  }

  let signIns = 0;
  const signIn = async () => {
    signIns += 1;
    const r = await capa(['connections', 'login', SOURCE], env, 60_000);
    dumpBrowserLog(browserLog);
    return r.code === 0;
  };
  try {
    if (!(await signIn())) {
      log('the sign-in failed; stopping here');
      return 1;
    }
    for (;;) {
      const call = await capa(['call', `${SOURCE}.${TOOL}`, '--json', '{}', '--raw'], env, 60_000, {
        // A call that waits for a sign-in (rather than failing at once) gets one while it waits.
        whileWaiting: async () => {
          if (signIns >= MAX_SIGN_INS) return;
          log('the call waits for a sign-in; signing in again');
          await signIn();
        },
      });
      if (call.code === 0) {
        log(`done: ${signIns} sign-in(s), the call succeeded`);
        return 0;
      }
      if (!needsSignIn(call.stdout + call.stderr) || signIns >= MAX_SIGN_INS) {
        log(`the call failed after ${signIns} sign-in(s)`);
        return 1;
      }
      log('the call needs a sign-in again (step-up or a new authorization server); signing in again');
      if (!(await signIn())) {
        log('the sign-in failed; stopping here');
        return 1;
      }
    }
  } finally {
    dumpBrowserLog(browserLog);
  }
}

// ---------------------------------------------------------------------------------------------
// The other client scenarios (not `auth/`): the hub as a client of an MCP server that needs no
// sign-in. What each scenario's server checks is how the client talks to it (headers, request
// metadata, `requestState`, reconnection, which tools it keeps). The hub is driven as a client
// app drives it: the TypeScript SDK's client over `capa mcp` (stdio) with every tool exposed
// (`toolExposure: expose-all`), which lists the tools and calls each one the hub serves of the
// source with the arguments below (else `{}`). A tool the hub left out of its catalog is never
// called: that is how `http-invalid-tool-headers` is judged. When the source asks for input
// within a call (an elicitation, in a 2026-07-28 `input_required` round or mid-call), the hub
// relays it to this client, which accepts: each field its default, else a value of its type.

/** Arguments per tool name of the suite's client scenarios; `schemaOf(name)` reads a listed tool's input schema. */
const ARGUMENTS = {
  add_numbers: () => ({ a: 2, b: 3 }),
  test_custom_headers: () => ({
    region: 'us-west1',
    priority: 5,
    verbose: true,
    debug: false,
    float_val: 1.5,
    non_ascii_val: 'café ☕',
    whitespace_val: '  padded  ',
    leading_space_val: ' leading',
    trailing_space_val: 'trailing ',
    internal_space_val: 'two words',
    control_char_val: 'bell\u0007',
    crlf_val: 'line\r\nbreak',
    tab_val: '\tindented',
    query: 'weather',
  }),
  test_custom_headers_null: () => ({ region: 'eu-central1', priority: 1, query: 'no verbose' }),
  valid_tool: () => ({ region: 'us-east1' }),
  json_schema_echo: (schemaOf) => ({ schema: schemaOf('json_schema_2020_12_tool') ?? {} }),
};
/** Tools that are only there to be listed (the scenario answers no call of them). */
const LIST_ONLY = new Set(['json_schema_2020_12_tool', 'lookup_user']);

/** An accepting answer to an elicitation form: each field's default, else a value of its type. */
function acceptForm(schema) {
  const content = {};
  for (const [key, field] of Object.entries(schema?.properties ?? {})) {
    if (field.default !== undefined) content[key] = field.default;
    else if (Array.isArray(field.enum) && field.enum.length) content[key] = field.enum[0];
    else if (field.type === 'boolean') content[key] = true;
    else if (field.type === 'number' || field.type === 'integer') content[key] = 1;
    else content[key] = 'yes';
  }
  return { action: 'accept', content };
}

async function useTheSource(url, configDir, env) {
  const file = path.join(configDir, 'capabilities.yaml');
  writeFileSync(
    file,
    `# Written by tests/conformance/auth-client-cmd.mjs for one conformance scenario.
servers:
  - id: ${SOURCE}
    type: mcp
    def:
      url: ${JSON.stringify(url)}
options:
  demo: false
  toolExposure: expose-all
`,
  );
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const client = new Client(
    { name: 'conformance-driver', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    log(`the hub relayed an elicitation: ${request.params.message}`);
    return acceptForm(request.params.requestedSchema);
  });
  const transport = new StdioClientTransport({ command: CAPA_BIN, args: ['mcp', '--config', file], env, stderr: 'pipe' });
  transport.stderr?.on('data', (d) => process.stderr.write(prefix('err', d)));
  const left = () => Math.max(1000, budgetMs - (Date.now() - started) - 3000);
  let failed = 0;
  try {
    await client.connect(transport, { timeout: left() });
    const { tools } = await client.listTools(undefined, { timeout: left() });
    const ours = tools.filter((t) => t.name.startsWith(`${SOURCE}.`));
    log(`listed: ${ours.map((t) => t.name).join(', ') || '(none)'}`);
    const nameOf = (t) => t.name.slice(SOURCE.length + 1);
    const schemaOf = (name) => ours.find((t) => nameOf(t) === name)?.inputSchema;
    for (const tool of ours) {
      const name = nameOf(tool);
      if (LIST_ONLY.has(name)) continue;
      const args = (ARGUMENTS[name] ?? (() => ({})))(schemaOf);
      try {
        const result = await client.callTool({ name: tool.name, arguments: args }, undefined, { timeout: left() });
        log(`${tool.name}: ${result.isError ? 'error ' : ''}${JSON.stringify(result.content).slice(0, 300)}`);
        if (result.isError) failed += 1;
      } catch (e) {
        log(`${tool.name} failed: ${e.message}`);
        failed += 1;
      }
    }
    log(`done: ${ours.length} tool(s) listed, ${failed} call(s) failed`);
  } catch (e) {
    log(`the hub did not answer as an MCP server: ${e.message}`);
    return 1;
  } finally {
    await client.close().catch(() => {});
  }
  return failed === 0 ? 0 : 1;
}

function parseContext(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    log('MCP_CONFORMANCE_CONTEXT is not JSON; ignoring it');
    return null;
  }
}

/** One HTTP source `conf`; JSON strings are valid YAML scalars, so values need no YAML quoting. */
function capabilitiesYaml(url, oauth) {
  const setting = Object.keys(oauth).length
    ? `\n${Object.entries(oauth).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`).join('\n')}`
    : ' true';
  return `# Written by tests/conformance/auth-client-cmd.mjs for one conformance scenario.
servers:
  - id: ${SOURCE}
    type: mcp
    def:
      url: ${JSON.stringify(url)}
      oauth:${setting}
options:
  demo: false
`;
}

/** Whether what capa printed says the source waits for a (new) sign-in. */
function needsSignIn(text) {
  return /needs_connection|awaiting_connection|connection_required|sign in to|connections login/i.test(text);
}

/** How long capa must still run after saying it needs a sign-in to count as waiting for one. */
const WAITING_MS = 1500;

/**
 * Runs capa with a time limit taken from the run's budget; its output goes to stderr, prefixed.
 * `whileWaiting()` runs (once per wait) when capa says the source needs a sign-in and is still
 * running WAITING_MS later, rather than exiting with that message.
 */
async function capa(args, env, limitMs, { whileWaiting, input } = {}) {
  const left = budgetMs - (Date.now() - started) - 3000;
  const limit = Math.max(1000, Math.min(limitMs, left));
  log(`$ capa ${args.map((a) => (/^[\w./:@=-]+$/.test(a) ? a : `'${a}'`)).join(' ')}`);
  const child = spawn(CAPA_BIN, args, {
    env,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin.end(input);
  let stdout = '';
  let stderr = '';
  const pending = [];
  let exited = false;
  let waitTimer = null;
  child.stdout.on('data', (d) => {
    stdout += d;
    process.stderr.write(prefix('out', d));
  });
  child.stderr.on('data', (d) => {
    stderr += d;
    process.stderr.write(prefix('err', d));
    if (whileWaiting && !waitTimer && needsSignIn(String(d))) {
      waitTimer = setTimeout(() => {
        if (exited) return;
        pending.push(whileWaiting().finally(() => (waitTimer = null)));
      }, WAITING_MS);
    }
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  }, limit);
  const code = await new Promise((resolve) => child.on('close', (c, s) => resolve(c ?? (s ? 1 : 0))));
  exited = true;
  clearTimeout(timer);
  if (waitTimer && pending.length === 0) clearTimeout(waitTimer);
  await Promise.all(pending);
  if (timedOut) log(`capa ${args[0]} ${args[1] ?? ''} did not finish within ${Math.round(limit / 1000)} s; stopped it`);
  log(`exit ${code}`);
  return { code: timedOut ? 124 : code, stdout, stderr };
}

function prefix(stream, data) {
  return String(data)
    .split('\n')
    .filter((l, i, all) => l !== '' || i < all.length - 1)
    .map((l) => `  capa ${stream}| ${l}\n`)
    .join('');
}

function dumpBrowserLog(file) {
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  if (text.length > browserLogShown) process.stderr.write(text.slice(browserLogShown));
  browserLogShown = text.length;
}

// ---------------------------------------------------------------------------------------------
// Browser: what a person's browser does when nobody has to click. The hub gives it a private
// `file://` page (crates/capa-server/src/approval_page/browser.rs) that forwards to the real URL;
// the suite's authorization endpoint answers at once with a redirect to the hub's loopback
// callback (code, state, maybe iss). The redirects are followed by hand so that each hop is
// logged (origin and path only: the query carries the state and the code).

async function browse(fileUrl) {
  const out = (line) => {
    const text = `[auth-client browser] ${line}\n`;
    if (process.env.AUTH_CLIENT_BROWSER_LOG) appendFileSync(process.env.AUTH_CLIENT_BROWSER_LOG, text);
    else process.stderr.write(text);
  };
  try {
    if (!fileUrl?.startsWith('file:///')) throw new Error(`expected the hub's file:// forwarding page, got ${JSON.stringify(fileUrl)}`);
    const html = readFileSync(fileURLToPath(fileUrl), 'utf8');
    const found = /id="target" href="([^"]+)"/.exec(html)?.[1] ?? /http-equiv="refresh" content="0;url=([^"]+)"/.exec(html)?.[1];
    if (!found) throw new Error('the forwarding page has no link');
    let url = new URL(found.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'));
    for (let hop = 0; hop < 10; hop += 1) {
      const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
      const location = response.headers.get('location');
      out(`GET ${url.origin}${url.pathname} -> ${response.status}`);
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        url = new URL(location, url);
        continue;
      }
      const body = (await response.text()).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
      out(`page: ${body.slice(0, 200)}`);
      return;
    }
    throw new Error('more than 10 redirects');
  } catch (e) {
    out(`failed: ${e.message}`);
    process.exitCode = 1;
  }
}

if (process.argv[2] === '--browser') {
  await browse(process.argv[3]);
} else if (process.env.CAPA_AUTH_CLIENT_INNER === '1') {
  process.exitCode = await inner(process.argv.at(-1));
} else {
  process.exitCode = await outer(process.argv.at(-1));
}
