// The team's identity provider for sign-in tests (tests/fixtures/oidc-provider.mjs), and a
// person's sign-in through it: the authorization code flow with PKCE, driven with plain HTTP
// requests (the provider signs in whoever `login_hint` names, without a form).
import { createHash, randomBytes } from 'node:crypto';

import { startFixture } from './support.mjs';

export const REDIRECT = 'http://127.0.0.1/callback';

/** Starts a provider; resolves {issuer, stop(), log()}. */
export async function startOidc() {
  const { found: issuer, log, stop } = await startFixture('oidc-provider.mjs', 'the identity provider', /oidc provider at (http:\/\/\S+)/);
  return { issuer, log, stop };
}

/** A cookie jar for one browser-like session: name=value pairs from `Set-Cookie`. */
class Jar {
  cookies = new Map();
  take(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Follows an authorization URL as a browser would, signing in `person`; resolves the `code`
 * the provider redirects to REDIRECT with.
 */
export async function authorize(authorizationUrl, person) {
  const url = new URL(authorizationUrl);
  url.searchParams.set('login_hint', person);
  const jar = new Jar();
  let next = url.href;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(REDIRECT)) {
      const back = new URL(next);
      const code = back.searchParams.get('code');
      if (!code) throw new Error(`the provider redirected without a code: ${next}`);
      return code;
    }
    const res = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(res);
    const location = res.headers.get('location');
    if (!location) throw new Error(`sign-in stopped at ${next}: HTTP ${res.status} ${await res.text()}`);
    next = new URL(location, next).href;
  }
  throw new Error('sign-in did not come back after 10 redirects');
}

/** `person` signs in with `clientId` for `resource`; resolves the access token (a JWT). */
export async function signIn(issuer, { person, resource, clientId = 'mcp-client' }) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const auth = new URL(`${issuer}/auth`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid email profile',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource,
    state: randomBytes(8).toString('hex'),
  })) {
    auth.searchParams.set(k, v);
  }
  const code = await authorize(auth.href, person);
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`token: HTTP ${res.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The claims of a JWT, unchecked (what the provider put in it). */
export function claimsOf(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

/**
 * An OAuth client provider for the TS SDK 1.x client: pre-registered as `mcp-client`; when the
 * SDK sends the person to sign in, `authorizationUrl` holds where.
 */
export class TestOAuthProvider {
  authorizationUrl;
  #tokens;
  #verifier;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'capabilities sign-in test',
      // What the client asks the provider for (the SDK sends it as `scope`).
      scope: 'openid email profile',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return { client_id: 'mcp-client' };
  }
  saveClientInformation() {}
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}
