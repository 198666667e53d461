#!/usr/bin/env node
// A check of tests/support/oauth-server.mjs and oauth-browser.mjs without the hub: this plays the
// OAuth client (by hand with fetch, and once with the SDK's own `auth()`), with a small loopback
// callback listener, and calls the tools through the SDK's Client over Streamable HTTP.
//
//   node tests/support/oauth-selftest.mjs       (the node test tests/node/oauth-server.test.mjs
//                                                runs the same steps)
//
// Without Chromium (/usr/bin/chromium) the steps that need it are left out and said so.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SERVER = path.join(HERE, 'oauth-server.mjs');
export const BROWSER = path.join(HERE, 'oauth-browser.mjs');
export const CHROMIUM = '/usr/bin/chromium';

/** Starts oauth-server.mjs with `args`; resolves with its ready line and a stop(). */
export async function startServer(args = []) {
  const child = spawn(process.execPath, [SERVER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const line = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`oauth-server exited (${code}) before it was ready: ${stderr}`)));
    setTimeout(() => reject(new Error(`oauth-server was not ready within 10 s: ${stderr}`)), 10_000).unref();
  });
  const info = JSON.parse(line);
  const stop = async () => {
    if (child.exitCode !== null) return child.exitCode;
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  };
  return { ...info, base: info.issuer.replace(/\/$/, ''), child, stop, stderr: () => stderr };
}

/** A loopback listener at /callback that hands over each redirect's query. */
export async function callbackListener() {
  const waiting = [];
  const arrived = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(url.searchParams.has('error') ? '<p>Sign-in failed.</p>' : '<p>Signed in to notes. You can close this tab.</p>');
    const next = waiting.shift();
    if (next) next(url.searchParams);
    else arrived.push(url.searchParams);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://127.0.0.1:${server.address().port}/callback`,
    next: () => (arrived.length ? Promise.resolve(arrived.shift()) : new Promise((resolve) => waiting.push(resolve))),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** What the hub does: a private page that forwards to `url`, and the browser given only its file URL. */
export async function openBrowser(url, { mode, action, log }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capa-open-'));
  try {
    const file = path.join(dir, 'open.html');
    const href = url.replaceAll('&', '&amp;').replaceAll('"', '&quot;');
    await writeFile(
      file,
      `<!doctype html>\n<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${href}">\n<title>Opening Capabilities</title></head>\n<body><p><a id="target" href="${href}">Continue to Capabilities</a></p></body></html>\n`,
      { mode: 0o600 },
    );
    await chmod(file, 0o600);
    const env = { ...process.env, OAUTH_BROWSER_MODE: mode, OAUTH_BROWSER_LOG: log, OAUTH_BROWSER_ACTION: action ?? 'approve' };
    const child = spawn(BROWSER, [pathToFileURL(file).href], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    return { code, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function postForm(url, fields) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  return { status: res.status, body: await res.json() };
}

/** Calls a tool with the SDK's Client over Streamable HTTP and a bearer token. */
export async function callTool(mcpUrl, token, name, args = {}) {
  const client = new Client({ name: 'oauth-selftest', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name, arguments: args });
    return result.content.map((c) => c.text).join('');
  } finally {
    await client.close();
  }
}

async function mcpStatus(mcpUrl, token) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  await res.arrayBuffer();
  return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate') };
}

const logLines = async (file) => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

/**
 * Every check, in order; `step(name, fn)` runs one (a node test's `t.test`, or a plain runner).
 * `chromium` false leaves out the steps that need a browser.
 */
export async function selftest({ step, chromium = existsSync(CHROMIUM), chromiumDeny = true, note = () => {} }) {
  const work = await mkdtemp(path.join(os.tmpdir(), 'oauth-selftest-'));
  const browserLog = path.join(work, 'browser.jsonl');
  const servers = [];
  const callback = await callbackListener();
  try {
    // ---------------------------------------------------------------- consent page, default TTL
    const s = await startServer(['--port', '0']);
    servers.push(s);
    const port = new URL(s.mcpUrl).port;
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(s))).filter((k) => ['mcpUrl', 'issuer', 'adminUrl'].includes(k)).sort(), ['adminUrl', 'issuer', 'mcpUrl']);
    assert.equal(s.mcpUrl, `http://127.0.0.1:${port}/mcp`);
    assert.equal(s.issuer, `http://127.0.0.1:${port}/`);
    assert.equal(s.adminUrl, `http://127.0.0.1:${port}/admin`);

    let client;
    await step('401 with WWW-Authenticate, then discovery (RFC 9728, RFC 8414)', async () => {
      const res = await mcpStatus(s.mcpUrl, 'nope');
      assert.equal(res.status, 401);
      assert.match(res.wwwAuthenticate, /^Bearer /);
      assert.match(res.wwwAuthenticate, /scope="mcp:tools"/);
      assert.match(res.wwwAuthenticate, new RegExp(`resource_metadata="${s.base}/.well-known/oauth-protected-resource/mcp"`));
      const prm = await (await fetch(`${s.base}/.well-known/oauth-protected-resource/mcp`)).json();
      assert.equal(prm.resource, s.mcpUrl);
      assert.deepEqual(prm.authorization_servers, [s.issuer]);
      const meta = await (await fetch(`${s.base}/.well-known/oauth-authorization-server`)).json();
      assert.equal(meta.issuer, s.issuer);
      assert.deepEqual(meta.scopes_supported, ['mcp:tools']);
      assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
      assert.ok(meta.grant_types_supported.includes('refresh_token'));
      assert.equal(meta.registration_endpoint, `${s.base}/register`);
    });

    await step('dynamic client registration (RFC 7591)', async () => {
      const res = await fetch(`${s.base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Capabilities selftest',
          redirect_uris: [callback.redirectUri],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        }),
      });
      assert.equal(res.status, 201);
      client = await res.json();
      assert.ok(client.client_id);
      assert.equal(client.client_secret, undefined);
    });

    const authorizeUrl = (challenge, state, extra = {}) => {
      const u = new URL(`${s.base}/authorize`);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: callback.redirectUri,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state,
        scope: 'mcp:tools',
        resource: s.mcpUrl,
        ...extra,
      })) {
        if (v !== undefined) u.searchParams.set(k, v);
      }
      return u.href;
    };

    /** One sign-in through the browser script; the callback's query. */
    const signIn = async (mode, action, extra) => {
      const { verifier, challenge } = pkce();
      const state = randomBytes(12).toString('hex');
      const opened = openBrowser(authorizeUrl(challenge, state, extra), { mode, action, log: browserLog });
      const query = await callback.next();
      const { code, stderr } = await opened;
      assert.equal(code, 0, `the browser script failed: ${stderr}`);
      assert.equal(query.get('state'), state);
      return { query, verifier };
    };

    const exchange = (code, verifier, extra = {}) =>
      postForm(`${s.base}/token`, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: client.client_id,
        redirect_uri: callback.redirectUri,
        resource: s.mcpUrl,
        ...extra,
      });
    const refresh = (refreshToken) =>
      postForm(`${s.base}/token`, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client_id, resource: s.mcpUrl });

    let tokens;
    const modes = chromium ? ['chromium', 'fetch'] : ['fetch'];
    if (!chromium) note(`no Chromium at ${CHROMIUM}: the chromium mode of the browser script is not checked`);
    for (const mode of modes) {
      await step(`consent page approved (${mode} mode), code + PKCE S256 + resource exchanged for tokens${mode === 'fetch' ? ' (a wrong verifier first refused)' : ''}`, async () => {
        const { query, verifier } = await signIn(mode, 'approve');
        assert.ok(query.get('code'));
        if (mode === 'fetch') {
          const wrong = await exchange(query.get('code'), pkce().verifier);
          assert.equal(wrong.status, 400, 'a wrong PKCE verifier is refused');
          assert.equal(wrong.body.error, 'invalid_grant');
        }
        const res = await exchange(query.get('code'), verifier);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        tokens = res.body;
        assert.ok(tokens.access_token && tokens.refresh_token);
        assert.equal(tokens.token_type, 'Bearer');
        assert.equal(tokens.expires_in, 3600);
        assert.equal(tokens.scope, 'mcp:tools');
        const again = await exchange(query.get('code'), verifier);
        assert.equal(again.status, 400, 'a code is good for one exchange');
        assert.equal(again.body.error, 'invalid_grant');
        const entry = (await logLines(browserLog)).at(-1);
        assert.equal(entry.ok, true);
        assert.equal(entry.url, callback.redirectUri);
        assert.match(entry.text, /Signed in to notes/);
        const logText = await readFile(browserLog, 'utf8');
        assert.ok(!logText.includes(query.get('code')) && !logText.includes(query.get('state')), 'the browser log never has code or state');
      });
    }

    await step('whoami, echo and add through the SDK Client with the bearer token', async () => {
      const me = JSON.parse(await callTool(s.mcpUrl, tokens.access_token, 'whoami'));
      assert.deepEqual(me, { clientId: client.client_id, scopes: ['mcp:tools'], resource: s.mcpUrl });
      assert.equal(await callTool(s.mcpUrl, tokens.access_token, 'echo', { text: 'hello' }), 'hello');
      assert.equal(await callTool(s.mcpUrl, tokens.access_token, 'add', { a: 2, b: 3.5 }), '5.5');
    });

    await step('refresh rotates the refresh token; the old one is refused', async () => {
      const res = await refresh(tokens.refresh_token);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(res.body.refresh_token && res.body.refresh_token !== tokens.refresh_token);
      assert.notEqual(res.body.access_token, tokens.access_token);
      const old = await refresh(tokens.refresh_token);
      assert.equal(old.status, 400);
      assert.equal(old.body.error, 'invalid_grant');
      tokens = res.body;
      assert.equal(JSON.parse(await callTool(s.mcpUrl, tokens.access_token, 'whoami')).clientId, client.client_id);
    });

    for (const mode of chromiumDeny ? modes : ['fetch']) {
      await step(`consent page denied (${mode} mode): the callback gets error=access_denied`, async () => {
        const { query } = await signIn(mode, 'deny');
        assert.equal(query.get('error'), 'access_denied');
        assert.equal(query.get('code'), null);
        const entry = (await logLines(browserLog)).at(-1);
        assert.equal(entry.error, 'access_denied');
        assert.equal(entry.url, callback.redirectUri);
      });
    }

    await step('an unknown scope is refused at the authorization endpoint', async () => {
      // Refused before any consent page: the redirect comes at once.
      const res = await fetch(authorizeUrl(pkce().challenge, 'st', { scope: 'mcp:admin' }), { redirect: 'manual' });
      assert.equal(res.status, 302);
      const location = new URL(res.headers.get('location'));
      assert.equal(location.origin + location.pathname, callback.redirectUri);
      assert.equal(location.searchParams.get('error'), 'invalid_scope');
      assert.equal(location.searchParams.get('state'), 'st');
    });

    await step('/admin/stats counts what happened', async () => {
      const stats = await (await fetch(`${s.adminUrl}/stats`)).json();
      assert.equal(stats.registrations, 1);
      assert.equal(stats.authorizations, modes.length);
      assert.ok(stats.denials >= 1);
      assert.equal(stats.tokenGrants, modes.length);
      assert.equal(stats.refreshGrants, 1);
      assert.equal(stats.refusedRefreshes, 1);
      assert.equal(stats.lastResource, s.mcpUrl);
      assert.deepEqual(stats.lastScopes, ['mcp:tools']);
    });

    await step('/admin/revoke: the refresh token gets invalid_grant, the access token 401', async () => {
      const res = await fetch(`${s.adminUrl}/revoke`, { method: 'POST' });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.ok(body.revoked.refreshTokens >= 1);
      const r = await refresh(tokens.refresh_token);
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_grant');
      assert.equal((await mcpStatus(s.mcpUrl, tokens.access_token)).status, 401);
    });

    await step('SIGTERM ends the server cleanly', async () => {
      assert.equal(await s.stop(), 0);
    });

    // ------------------------------------------- auto-approve, 2 s tokens, strict resource
    const t = await startServer(['--port', '0', '--token-ttl', '2', '--auto-approve', '--strict-resource']);
    servers.push(t);

    let sdkTokens;
    let sdkClientId;
    let sdkTokensAt;
    await step("the SDK's own auth(): discovery, registration, PKCE, resource (fetch mode, auto-approve)", async () => {
      const store = {};
      const provider = {
        redirectUrl: callback.redirectUri,
        clientMetadata: {
          client_name: 'SDK auth selftest',
          redirect_uris: [callback.redirectUri],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        state: () => (store.state = randomBytes(8).toString('hex')),
        clientInformation: () => store.client,
        saveClientInformation: (c) => (store.client = c),
        tokens: () => store.tokens,
        saveTokens: (x) => (store.tokens = x),
        saveCodeVerifier: (v) => (store.verifier = v),
        codeVerifier: () => store.verifier,
        redirectToAuthorization: (url) => {
          assert.equal(url.searchParams.get('resource'), t.mcpUrl);
          store.opened = openBrowser(url.href, { mode: 'fetch', log: browserLog });
        },
      };
      assert.equal(await auth(provider, { serverUrl: t.mcpUrl }), 'REDIRECT');
      const query = await callback.next();
      assert.equal((await store.opened).code, 0);
      assert.equal(query.get('state'), store.state);
      assert.equal(await auth(provider, { serverUrl: t.mcpUrl, authorizationCode: query.get('code') }), 'AUTHORIZED');
      sdkTokens = store.tokens;
      sdkTokensAt = Date.now();
      sdkClientId = store.client.client_id;
      assert.equal(sdkTokens.expires_in, 2);
      const me = JSON.parse(await callTool(t.mcpUrl, sdkTokens.access_token, 'whoami'));
      assert.equal(me.clientId, sdkClientId);
      assert.equal(me.resource, t.mcpUrl);
      const stats = await (await fetch(`${t.adminUrl}/stats`)).json();
      assert.equal(stats.lastResource, t.mcpUrl);
    });

    await step('--strict-resource: a token issued without resource is refused at /mcp', async () => {
      const { verifier, challenge } = pkce();
      const u = new URL(`${t.base}/authorize`);
      u.search = new URLSearchParams({
        response_type: 'code',
        client_id: sdkClientId,
        redirect_uri: callback.redirectUri,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'x',
      }).toString();
      // Auto-approve redirects at once: no browser needed here.
      const redirect = await fetch(u.href, { redirect: 'manual' });
      assert.equal(redirect.status, 302);
      const query = new URL(redirect.headers.get('location')).searchParams;
      const res = await postForm(`${t.base}/token`, { grant_type: 'authorization_code', code: query.get('code'), code_verifier: verifier, client_id: sdkClientId });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal((await (await fetch(`${t.adminUrl}/stats`)).json()).lastResource, null);
      const status = await mcpStatus(t.mcpUrl, res.body.access_token);
      assert.equal(status.status, 401);
      assert.match(status.wwwAuthenticate, /not issued for this resource/);
    });

    await step('--token-ttl 2: the access token expires, a refresh gives a working one', async () => {
      // Past the 2 s from the token's issue (the step before ran meanwhile).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, sdkTokensAt + 2100 - Date.now())));
      const expired = await mcpStatus(t.mcpUrl, sdkTokens.access_token);
      assert.equal(expired.status, 401);
      assert.match(expired.wwwAuthenticate, /invalid_token/);
      const res = await postForm(`${t.base}/token`, { grant_type: 'refresh_token', refresh_token: sdkTokens.refresh_token, client_id: sdkClientId, resource: t.mcpUrl });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(JSON.parse(await callTool(t.mcpUrl, res.body.access_token, 'whoami')).clientId, sdkClientId);
      const expire = await fetch(`${t.adminUrl}/expire`, { method: 'POST' });
      assert.equal(expire.status, 200);
      assert.equal((await mcpStatus(t.mcpUrl, res.body.access_token)).status, 401, '/admin/expire ends access tokens at once');
    });
  } finally {
    await callback.close();
    for (const server of servers) await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let failed = 0;
  let passed = 0;
  const started = Date.now();
  await selftest({
    note: (text) => console.log(`# ${text}`),
    step: async (name, fn) => {
      const t0 = Date.now();
      try {
        await fn();
        passed += 1;
        console.log(`ok - ${name} (${Date.now() - t0} ms)`);
      } catch (e) {
        failed += 1;
        console.log(`not ok - ${name}\n${e?.stack ?? e}`);
        throw e;
      }
    },
  }).catch(() => {});
  console.log(`${passed} passed, ${failed} failed (${Date.now() - started} ms)`);
  process.exit(failed ? 1 : 0);
}
