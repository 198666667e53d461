#!/usr/bin/env node
// An OAuth-protected MCP upstream for the hub's OAuth tests: Streamable HTTP at /mcp, guarded by
// bearer tokens that this same process issues as its own authorization server (one origin).
//
//   node tests/support/oauth-server.mjs [--port 0] [--token-ttl 3600] [--strict-resource]
//        [--auto-approve] [--scopes "mcp:tools"] [--client-id ID] [--no-registration] [--no-refresh]
//
// When it is listening it prints one JSON line on stdout:
//   {"mcpUrl":"http://127.0.0.1:<port>/mcp","issuer":"http://127.0.0.1:<port>/","adminUrl":"http://127.0.0.1:<port>/admin"}
//
// Built from the official TypeScript SDK's pieces (mcpAuthRouter for discovery, registration,
// /authorize, /token and /revoke; requireBearerAuth; McpServer over StreamableHTTPServerTransport)
// with an in-memory provider of its own, because the SDK's demo provider has no refresh tokens and a
// fixed one-hour lifetime. What it adds for the tests:
// - a consent page (buttons #approve and #deny) unless --auto-approve;
// - refresh tokens with rotation: each refresh returns a new refresh token and the old one is
//   refused from then on (invalid_grant);
// - --token-ttl <seconds> for the access token's lifetime;
// - the RFC 8707 `resource` parameter recorded (GET /admin/stats) and, with --strict-resource, a
//   token whose resource is not this MCP URL refused at /mcp;
// - POST /admin/revoke (every access and refresh token), POST /admin/expire (every access token
//   expires now, refresh tokens stay) and GET /admin/stats, for loopback callers only.
//
// The SDK refuses an http:// issuer unless MCP_DANGEROUSLY_ALLOW_INSECURE_ISSUER_URL is set, but
// it exempts the hosts `localhost` and `127.0.0.1`; this server is always 127.0.0.1, so the
// variable is not needed (and not set: setting it makes the SDK print a warning on stderr).
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import express from 'express';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const HOST = '127.0.0.1';
/** How long an authorization code, and a consent page's pending request, can be used. */
const CODE_LIFETIME_MS = 10 * 60 * 1000;

function parseArgs(argv) {
  const options = {
    port: 0,
    tokenTtl: 3600,
    strictResource: false,
    autoApprove: false,
    scopes: ['mcp:tools'],
    clientId: null,
    registration: true,
    refresh: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '--port':
        options.port = Number(value());
        break;
      case '--token-ttl':
        options.tokenTtl = Number(value());
        break;
      case '--strict-resource':
        options.strictResource = true;
        break;
      case '--auto-approve':
        options.autoApprove = true;
        break;
      case '--scopes':
        options.scopes = value().split(/[\s,]+/).filter(Boolean);
        break;
      case '--client-id':
        options.clientId = value();
        break;
      case '--no-registration':
        options.registration = false;
        break;
      case '--no-refresh':
        options.refresh = false;
        break;
      default:
        usage(`unknown argument ${arg}`);
    }
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) usage('--port takes a port number (0 picks a free one)');
  if (!Number.isFinite(options.tokenTtl) || options.tokenTtl <= 0) usage('--token-ttl takes a positive number of seconds');
  if (options.scopes.length === 0) usage('--scopes takes at least one scope');
  return options;
}

function usage(problem) {
  console.error(
    `oauth-server: ${problem}. Usage: oauth-server.mjs [--port N] [--token-ttl SECONDS] [--strict-resource] ` +
      '[--auto-approve] [--scopes "a b"] [--client-id ID] [--no-registration] [--no-refresh]',
  );
  process.exit(2);
}

const options = parseArgs(process.argv.slice(2));

const secret = () => randomBytes(32).toString('base64url');

const stats = {
  registrations: 0,
  authorizations: 0, // approved authorization requests (codes issued)
  denials: 0,
  tokenGrants: 0, // authorization_code grants that returned tokens
  refreshGrants: 0, // refresh_token grants that returned tokens
  refusedRefreshes: 0, // refresh tokens refused: unknown, already rotated, or revoked
  revocations: 0, // POST /admin/revoke calls
  lastResource: null, // the `resource` of the last authorization or token request (null: none sent)
  lastScopes: null, // the scopes granted last
};

/** `resource` as recorded in stats: the string the client sent, or null. */
const resourceText = (resource) => (resource ? resource.href : null);

class ClientsStore {
  clients = new Map();

  async getClient(clientId) {
    return this.clients.get(clientId);
  }

  add(client) {
    this.clients.set(client.client_id, client);
    return client;
  }
}

class RegisteringClientsStore extends ClientsStore {
  async registerClient(client) {
    stats.registrations += 1;
    return this.add(client);
  }
}

class Provider {
  constructor({ mcpUrl, scopes, tokenTtl, autoApprove, refresh, registration }) {
    this.mcpUrl = mcpUrl;
    this.scopes = scopes;
    this.tokenTtlMs = tokenTtl * 1000;
    this.autoApprove = autoApprove;
    this.refresh = refresh;
    // Without registerClient the SDK leaves registration_endpoint out of the metadata.
    this.clientsStore = registration ? new RegisteringClientsStore() : new ClientsStore();
    this.pending = new Map(); // consent id -> { client, params, expiresAt }
    this.codes = new Map(); // code -> { clientId, params, scopes, expiresAt }
    this.accessTokens = new Map(); // token -> { clientId, scopes, resource, expiresAt }
    this.refreshTokens = new Map(); // token -> { clientId, scopes, resource }
  }

  /** The scopes a request gets: the ones asked for (all must be known), else the default set. */
  grantScopes(requested) {
    const asked = (requested ?? []).filter(Boolean);
    if (asked.length === 0) return [...this.scopes];
    const unknown = asked.filter((s) => !this.scopes.includes(s));
    if (unknown.length > 0) throw new InvalidScopeError(`Unknown scope ${unknown.join(' ')}; this server offers ${this.scopes.join(' ')}.`);
    return asked;
  }

  async authorize(client, params, res) {
    stats.lastResource = resourceText(params.resource);
    const scopes = this.grantScopes(params.scopes);
    if (this.autoApprove) {
      res.redirect(302, this.approve(client, params, scopes));
      return;
    }
    const id = secret();
    this.pending.set(id, { client, params, scopes, expiresAt: Date.now() + CODE_LIFETIME_MS });
    res.status(200).type('html').send(consentPage(id, client.client_name || client.client_id, scopes));
  }

  /** The redirect for an approved request: a fresh code (and the state) on the redirect URI. */
  approve(client, params, scopes) {
    const code = secret();
    this.codes.set(code, { clientId: client.client_id, params, scopes, expiresAt: Date.now() + CODE_LIFETIME_MS });
    stats.authorizations += 1;
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    return target.href;
  }

  /** The consent page's answer: the redirect, or null when the request is unknown or expired. */
  decide(id, approved) {
    const request = this.pending.get(id);
    this.pending.delete(id);
    if (!request || request.expiresAt < Date.now()) return null;
    if (approved) return this.approve(request.client, request.params, request.scopes);
    stats.denials += 1;
    const target = new URL(request.params.redirectUri);
    target.searchParams.set('error', 'access_denied');
    target.searchParams.set('error_description', 'The user denied the request.');
    if (request.params.state !== undefined) target.searchParams.set('state', request.params.state);
    return target.href;
  }

  /** The code's record, checked to belong to this client and still be valid. */
  code(client, authorizationCode) {
    const record = this.codes.get(authorizationCode);
    if (!record || record.expiresAt < Date.now()) throw new InvalidGrantError('The authorization code is invalid, expired or was already used.');
    if (record.clientId !== client.client_id) throw new InvalidGrantError('The authorization code was issued to another client.');
    return record;
  }

  async challengeForAuthorizationCode(client, authorizationCode) {
    return this.code(client, authorizationCode).params.codeChallenge;
  }

  async exchangeAuthorizationCode(client, authorizationCode, _codeVerifier, redirectUri, resource) {
    const record = this.code(client, authorizationCode);
    this.codes.delete(authorizationCode); // one use only
    stats.lastResource = resourceText(resource);
    if (redirectUri !== undefined && redirectUri !== record.params.redirectUri) {
      throw new InvalidGrantError('redirect_uri differs from the one of the authorization request.');
    }
    const authorized = resourceText(record.params.resource);
    if (resource && authorized && resource.href !== authorized) {
      throw new InvalidTargetError(`The resource ${resource.href} is not the one authorized (${authorized}).`);
    }
    const tokens = this.issue(client.client_id, record.scopes, resource ?? record.params.resource);
    stats.tokenGrants += 1;
    return tokens;
  }

  async exchangeRefreshToken(client, refreshToken, scopes, resource) {
    stats.lastResource = resourceText(resource);
    const record = this.refreshTokens.get(refreshToken);
    if (!record || record.clientId !== client.client_id) {
      stats.refusedRefreshes += 1;
      throw new InvalidGrantError('The refresh token is invalid, revoked, or was already used (tokens rotate on each refresh).');
    }
    let granted = record.scopes;
    if (scopes && scopes.length > 0) {
      const extra = scopes.filter((s) => !record.scopes.includes(s));
      if (extra.length > 0) throw new InvalidScopeError(`The refresh token does not cover ${extra.join(' ')}.`);
      granted = scopes;
    }
    this.refreshTokens.delete(refreshToken); // rotation: the old refresh token is spent
    const tokens = this.issue(client.client_id, granted, resource ?? record.resource);
    stats.refreshGrants += 1;
    return tokens;
  }

  issue(clientId, scopes, resource) {
    const accessToken = secret();
    this.accessTokens.set(accessToken, { clientId, scopes, resource, expiresAt: Date.now() + this.tokenTtlMs });
    stats.lastScopes = scopes;
    const tokens = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.ceil(this.tokenTtlMs / 1000),
      scope: scopes.join(' '),
    };
    if (this.refresh) {
      const refreshToken = secret();
      this.refreshTokens.set(refreshToken, { clientId, scopes, resource });
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  }

  async verifyAccessToken(token) {
    const record = this.accessTokens.get(token);
    if (!record) throw new InvalidTokenError('The access token is unknown or was revoked.');
    // Checked here in milliseconds: the middleware compares whole seconds, up to a second late.
    if (record.expiresAt <= Date.now()) throw new InvalidTokenError('The access token has expired.');
    return {
      token,
      clientId: record.clientId,
      scopes: record.scopes,
      expiresAt: Math.floor(record.expiresAt / 1000),
      resource: record.resource,
    };
  }

  async revokeToken(client, { token }) {
    for (const map of [this.accessTokens, this.refreshTokens]) {
      if (map.get(token)?.clientId === client.client_id) map.delete(token);
    }
  }

  revokeAll() {
    const revoked = { accessTokens: this.accessTokens.size, refreshTokens: this.refreshTokens.size };
    this.accessTokens.clear();
    this.refreshTokens.clear();
    stats.revocations += 1;
    return revoked;
  }

  expireAll() {
    const now = Date.now() - 1;
    for (const record of this.accessTokens.values()) record.expiresAt = now;
    return { accessTokens: this.accessTokens.size };
  }
}

const escapeHtml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function consentPage(id, clientName, scopes) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Allow access to notes</title></head>
<body>
<h1>Allow ${escapeHtml(clientName)} to use notes?</h1>
<p>It asks for: ${escapeHtml(scopes.join(' '))}</p>
<form method="post" action="/consent">
<input type="hidden" name="id" value="${escapeHtml(id)}">
<button id="approve" type="submit" name="decision" value="approve">Allow</button>
<button id="deny" type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>
`;
}

/** The SDK's token and revocation handlers read client credentials from the body only
 * (client_secret_post); RFC 6749 also has HTTP Basic, which some clients use. */
function basicCredentialsToBody(req, _res, next) {
  const header = req.headers.authorization;
  const match = header && /^Basic\s+(.+)$/i.exec(header);
  if (match && req.body && typeof req.body === 'object') {
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      req.body.client_id ??= decodeURIComponent(decoded.slice(0, colon));
      req.body.client_secret ??= decodeURIComponent(decoded.slice(colon + 1));
    }
  }
  next();
}

function loopbackOnly(req, res, next) {
  const address = req.socket.remoteAddress ?? '';
  if (address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1') return next();
  res.status(403).json({ error: 'forbidden', error_description: 'The admin endpoints answer loopback callers only.' });
}

function mcpServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The client_id and scopes of the access token of this request.', inputSchema: {} },
    async (_args, extra) => {
      const auth = extra.authInfo;
      const text = JSON.stringify({ clientId: auth?.clientId ?? null, scopes: auth?.scopes ?? [], resource: auth?.resource?.href ?? null });
      return { content: [{ type: 'text', text }] };
    },
  );
  server.registerTool(
    'echo',
    { description: 'Returns its text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

const httpServer = http.createServer();
await new Promise((resolve, reject) => {
  httpServer.once('error', reject);
  httpServer.listen(options.port, HOST, resolve);
});
const { port } = httpServer.address();
const origin = `http://${HOST}:${port}`;
const mcpUrl = new URL(`${origin}/mcp`);
const issuerUrl = new URL(`${origin}/`);

const provider = new Provider({ mcpUrl, ...options });
if (options.clientId) {
  // A public client known in advance, for `oauth: { clientId }`: any loopback port may be used
  // with the path /callback (RFC 8252 §7.3, which the SDK's redirect check follows).
  provider.clientsStore.add({
    client_id: options.clientId,
    client_name: 'Preregistered client',
    redirect_uris: [`http://${HOST}/callback`],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
}

const app = express();
app.disable('x-powered-by');
app.use(['/token', '/revoke'], express.urlencoded({ extended: false }), basicCredentialsToBody);
app.use(
  mcpAuthRouter({
    provider,
    issuerUrl,
    resourceServerUrl: mcpUrl,
    scopesSupported: options.scopes,
    resourceName: 'notes',
    // The tests make many requests from one address; the SDK's default limits would answer 429.
    authorizationOptions: { rateLimit: false },
    tokenOptions: { rateLimit: false },
    clientRegistrationOptions: { rateLimit: false },
    revocationOptions: { rateLimit: false },
  }),
);

app.post('/consent', express.urlencoded({ extended: false }), (req, res) => {
  res.setHeader('Cache-Control', 'no-store');
  const id = typeof req.body?.id === 'string' ? req.body.id : '';
  const decision = req.body?.decision;
  if (decision !== 'approve' && decision !== 'deny') {
    res.status(400).type('text').send('The consent form was sent without a decision: press Allow or Deny.');
    return;
  }
  const target = provider.decide(id, decision === 'approve');
  if (!target) {
    res.status(400).type('text').send('This sign-in request was already answered or has expired: start the sign-in again.');
    return;
  }
  res.redirect(302, target);
});

app.post('/admin/revoke', loopbackOnly, (_req, res) => res.json({ ok: true, revoked: provider.revokeAll() }));
app.post('/admin/expire', loopbackOnly, (_req, res) => res.json({ ok: true, expired: provider.expireAll() }));
app.get('/admin/stats', loopbackOnly, (_req, res) => res.json(stats));

const bearer = requireBearerAuth({
  verifier: provider,
  // Required scopes also go into the 401's WWW-Authenticate as `scope="…"`.
  requiredScopes: options.scopes,
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  expectedResource: options.strictResource ? mcpUrl : undefined,
});

const sessions = new Map(); // Mcp-Session-Id -> transport

function jsonRpcError(res, status, message) {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

app.post('/mcp', express.json({ limit: '4mb' }), bearer, async (req, res) => {
  try {
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) return jsonRpcError(res, 404, 'Session not found: initialize a new session.');
      if (!isInitializeRequest(req.body)) return jsonRpcError(res, 400, 'No Mcp-Session-Id: the first request must be initialize.');
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomBytes(16).toString('hex'),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await mcpServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    console.error(`oauth-server: an MCP request failed: ${error?.message ?? error}`);
    if (!res.headersSent) jsonRpcError(res, 500, 'Internal server error.');
  }
});

async function sessionRequest(req, res) {
  const transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport) return jsonRpcError(res, req.headers['mcp-session-id'] ? 404 : 400, 'Unknown or missing Mcp-Session-Id.');
  await transport.handleRequest(req, res);
}
app.get('/mcp', bearer, sessionRequest);
app.delete('/mcp', bearer, sessionRequest);

httpServer.on('request', app);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  for (const transport of sessions.values()) await transport.close().catch(() => {});
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

process.stdout.write(`${JSON.stringify({ mcpUrl: mcpUrl.href, issuer: issuerUrl.href, adminUrl: `${origin}/admin` })}\n`);
