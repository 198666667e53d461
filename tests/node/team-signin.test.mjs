// Issue 45, sign-in: a team hub (`capa hub serve --sign-in-issuer … --resource …`) is an OAuth
// protected resource whose authorization server is the team's OpenID provider
// (tests/fixtures/oidc-provider.mjs, `oidc-provider` from npm). Only the provider's access
// tokens for this hub open it: the shared token does not; a token for another audience, from
// another issuer, expired or altered is refused with a 401 that names the Protected Resource
// Metadata; the TS SDK 1.x client finds the provider from that metadata and signs a person in.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  freePort,
  cleanup,
  sleep,
} from './support.mjs';
import { TestOAuthProvider, authorize, claimsOf, signIn, startOidc } from './signin-support.mjs';

async function connectWith(mcpUrl, token) {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'signin-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function execute(client, code) {
  const result = await client.callTool({ name: 'execute', arguments: { code } });
  return result.structuredContent;
}

describe('a team hub with sign-in', () => {
  let provider;
  let otherProvider;
  let hub;
  let resource;

  const post = (token, body = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    fetch(resource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });

  before(async () => {
    [provider, otherProvider] = await Promise.all([startOidc(), startOidc()]);
    const sandbox = await makeSandbox('capa-signin-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { toolExposure: 'code', search: { semantic: 'off' } },
    });
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    sandbox.env = { ...sandbox.env, CAPA_SIGN_IN_ISSUER: provider.issuer, CAPA_RESOURCE: resource };
    hub = await startHub({ configFile, sandbox, http: `127.0.0.1:${port}`, waitReady: false });
  });

  after(async () => {
    await hub?.stop();
    await provider?.stop();
    await otherProvider?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('serves its Protected Resource Metadata, naming the provider, to anyone', async () => {
    const res = await fetch(`${hub.url}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      resource,
      authorization_servers: [provider.issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'Capabilities team hub',
    });
  });

  it('answers a request without a token, or with the shared token, 401 naming the metadata', async () => {
    for (const token of [undefined, hub.token]) {
      const res = await post(token);
      assert.equal(res.status, 401, `token ${token ? 'shared' : 'none'}`);
      assert.equal(
        res.headers.get('www-authenticate').split(',')[0],
        `Bearer resource_metadata="${hub.url}/.well-known/oauth-protected-resource/mcp"`,
      );
    }
    const api = await fetch(`${hub.url}/api/runs`, { headers: { authorization: `Bearer ${hub.token}` } });
    assert.equal(api.status, 401, 'the shared token opens no API either');
    const health = await fetch(`${hub.url}/api/health`);
    assert.equal(health.status, 200, 'the liveness check HAProxy polls stays open');
  });

  it('lets a person in with the provider token for this hub, and runs their code', async () => {
    const token = await signIn(provider.issuer, { person: 'alice', resource });
    const claims = claimsOf(token);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.aud, resource);
    const client = await connectWith(resource, token);
    try {
      const envelope = await execute(client, 'return 6 * 7');
      assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
      assert.equal(envelope.result, 42);
    } finally {
      await client.close();
    }
  });

  it('refuses a token for another audience, from another issuer, or altered', async () => {
    const refusedFor = async (token) => {
      const res = await post(token);
      assert.equal(res.status, 401);
      const challenge = res.headers.get('www-authenticate');
      assert.match(challenge, /error="invalid_token"/);
      return challenge;
    };
    const elsewhere = await signIn(provider.issuer, { person: 'bob', resource: 'http://127.0.0.1:1/mcp' });
    assert.match(await refusedFor(elsewhere), /not meant for this hub/);

    const foreign = await signIn(otherProvider.issuer, { person: 'bob', resource });
    assert.equal(claimsOf(foreign).aud, resource, 'the other provider made a token for this hub');
    assert.match(await refusedFor(foreign), /key the provider does not publish/);

    const good = await signIn(provider.issuer, { person: 'bob', resource });
    const [head, , signature] = good.split('.');
    const claims = { ...claimsOf(good), sub: 'carol' };
    const altered = `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    assert.match(await refusedFor(altered), /signature does not verify/);
    assert.notEqual((await post(good)).status, 401, 'the unaltered token is let in');
  });

  it('refuses a token once it has expired', async () => {
    const token = await signIn(provider.issuer, { person: 'bob', resource, clientId: 'short-lived' });
    const { exp, iat } = claimsOf(token);
    assert.ok(exp - iat <= 1, `a one-second token (${exp - iat} s)`);
    // The hub allows five seconds of clock difference; a second more and it is gone.
    await sleep((exp + 6) * 1000 - Date.now());
    const res = await post(token);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate'), /has expired/);
  });

  it('signs a person in from the TS SDK client, which finds the provider in the metadata', async () => {
    const auth = new TestOAuthProvider();
    const first = new Client({ name: 'signin-sdk', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(auth.authorizationUrl, 'the SDK sent the person to sign in');
    assert.equal(auth.authorizationUrl.origin, provider.issuer);
    assert.equal(auth.authorizationUrl.searchParams.get('resource'), resource);
    const code = await authorize(auth.authorizationUrl.href, 'carol');
    await transport.finishAuth(code);
    assert.equal(claimsOf(auth.tokens().access_token).sub, 'carol');

    const client = new Client({ name: 'signin-sdk', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth }));
    try {
      const envelope = await execute(client, 'return "signed in"');
      assert.equal(envelope.result, 'signed in', JSON.stringify(envelope));
    } finally {
      await client.close();
    }
  });
});
