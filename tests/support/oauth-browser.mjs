#!/usr/bin/env node
// A test "browser" for CAPA_BROWSER in the OAuth tests: `oauth-browser.mjs <file:// URL>`.
//
// The hub hands a browser a private `file://` forwarding page (crates/capa-server/src/
// approval_page/browser.rs), never the authorization URL itself; this reads the real link from the
// page's `<a id="target" href="…">` and goes there:
// - OAUTH_BROWSER_MODE=chromium (default): Debian's Chromium through playwright-core; on the
//   authorization server's consent page it clicks #approve (#deny when OAUTH_BROWSER_ACTION=deny)
//   and waits until the page it lands on (the hub's loopback callback) has loaded.
// - OAUTH_BROWSER_MODE=fetch: no browser; follows redirects with fetch, answers a consent form
//   (the button #approve or #deny) by posting it, and GETs the final callback URL.
//
// The hub starts this detached and never waits for it, so what happened goes to
// $OAUTH_BROWSER_LOG (one JSON line appended per run, when set): the callback's origin and path,
// its `error` if any, and the page's text; never the values of `code` or `state`. Exit 0 when the
// callback page loaded, 1 otherwise.
import { appendFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CHROMIUM = process.env.OAUTH_BROWSER_CHROMIUM || '/usr/bin/chromium';
const MODE = process.env.OAUTH_BROWSER_MODE || 'chromium';
const ACTION = process.env.OAUTH_BROWSER_ACTION === 'deny' ? 'deny' : 'approve';
const TIMEOUT_MS = Number(process.env.OAUTH_BROWSER_TIMEOUT_MS) || 30_000;
const LOG = process.env.OAUTH_BROWSER_LOG;
const MAX_TEXT = 2000;

/** Strips one-time values (code, state, tokens) from any text that may quote a URL. */
function redact(text) {
  return String(text).replace(/([?&#](?:code|state|access_token|refresh_token|code_verifier)=)[^&#\s"'<>]*/gi, '$1…');
}

function log(entry) {
  if (!LOG) return;
  try {
    appendFileSync(LOG, `${JSON.stringify({ mode: MODE, action: ACTION, ...entry }, (_k, v) => (typeof v === 'string' ? redact(v) : v))}\n`);
  } catch {
    // Nowhere else to report: the hub does not read this process's output.
  }
}

function fail(message) {
  log({ ok: false, error: message });
  process.stderr.write(`oauth-browser: ${redact(message)}\n`);
  process.exit(1);
}

const decodeEntities = (text) =>
  text.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#39;', "'").replaceAll('&amp;', '&');

/** The link behind what the hub gave: the forwarding page's target, or the argument itself. */
function realLink(argument) {
  if (!argument) fail('no URL given: run as `oauth-browser.mjs <file:// URL of the forwarding page>`');
  if (!argument.startsWith('file:')) return argument;
  let html;
  try {
    html = readFileSync(fileURLToPath(argument), 'utf8');
  } catch (e) {
    fail(`cannot read the forwarding page ${argument}: ${e.message}`);
  }
  const href = /id="target" href="([^"]+)"/.exec(html)?.[1] ?? /http-equiv="refresh" content="0;url=([^"]+)"/.exec(html)?.[1];
  if (!href) fail(`no link in the forwarding page ${argument}`);
  return decodeEntities(href);
}

/** What the log says of the page the browser landed on. */
function landed(url, text) {
  const u = new URL(url);
  return {
    ok: true,
    url: `${u.origin}${u.pathname}`,
    error: u.searchParams.get('error') ?? undefined,
    errorDescription: u.searchParams.get('error_description') ?? undefined,
    text: text.trim().slice(0, MAX_TEXT),
  };
}

async function viaChromium(link) {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    fail(`playwright-core is not installed (npm ci): ${e.message}`);
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // playwright gives each launch a fresh temporary profile (its own --user-data-dir).
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    const authOrigin = new URL(link).origin;
    // The callback is wherever the flow leaves the authorization server's origin.
    const offAuthServer = (url) => url.origin !== authOrigin;
    await page.goto(link, { waitUntil: 'load' });
    if (!offAuthServer(new URL(page.url()))) {
      const button = page.locator(`#${ACTION}`);
      if ((await button.count()) === 0) {
        const text = await page.locator('body').innerText().catch(() => '');
        throw new Error(`the authorization server showed no consent page and did not redirect (${new URL(page.url()).pathname}): ${text.trim().slice(0, 300)}`);
      }
      await Promise.all([page.waitForURL(offAuthServer, { waitUntil: 'load' }), button.click()]);
    }
    const text = await page.locator('body').innerText().catch(() => '');
    return landed(page.url(), text);
  } finally {
    await browser.close().catch(() => {});
  }
}

/** A consent form's submission (action, fields, the chosen button), or null for another page. */
function consentForm(html, pageUrl) {
  const form = /<form\b[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const button = new RegExp(`<button\\b[^>]*\\bid="${ACTION}"[^>]*>`, 'i').exec(form[1])?.[0];
  if (!button) return null;
  const attr = (tag, name) => {
    const v = new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag)?.[1];
    return v === undefined ? undefined : decodeEntities(v);
  };
  const formTag = /<form\b[^>]*>/i.exec(form[0])[0];
  const fields = new URLSearchParams();
  for (const input of form[1].match(/<input\b[^>]*>/gi) ?? []) {
    const name = attr(input, 'name');
    if (name) fields.append(name, attr(input, 'value') ?? '');
  }
  const name = attr(button, 'name');
  if (name) fields.append(name, attr(button, 'value') ?? '');
  return {
    action: new URL(attr(formTag, 'action') ?? '', pageUrl).href,
    method: (attr(formTag, 'method') ?? 'get').toUpperCase(),
    fields,
  };
}

async function viaFetch(link) {
  const authOrigin = new URL(link).origin;
  let request = { url: link, method: 'GET', body: undefined };
  for (let hop = 0; hop < 20; hop++) {
    const init = { method: request.method, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) };
    if (request.body) {
      init.body = request.body;
      init.headers = { 'content-type': 'application/x-www-form-urlencoded' };
    }
    let res;
    try {
      res = await fetch(request.url, init);
    } catch (e) {
      const where = new URL(request.url);
      throw new Error(`cannot reach ${where.origin}${where.pathname}: ${e.cause?.code ?? e.cause?.message ?? e.message}`);
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.arrayBuffer();
      request = { url: new URL(location, request.url).href, method: 'GET', body: undefined };
      continue;
    }
    const text = await res.text();
    if (new URL(request.url).origin !== authOrigin) {
      if (!res.ok) throw new Error(`the callback answered ${res.status}: ${text.slice(0, 300)}`);
      return landed(request.url, text);
    }
    const form = res.ok ? consentForm(text, request.url) : null;
    if (!form) throw new Error(`the authorization server answered ${res.status} without a redirect or a consent form with #${ACTION}: ${text.slice(0, 300)}`);
    request =
      form.method === 'POST'
        ? { url: form.action, method: 'POST', body: form.fields.toString() }
        : { url: `${form.action.split('?')[0]}?${form.fields}`, method: 'GET', body: undefined };
  }
  throw new Error('more than 20 redirects without reaching the callback');
}

process.on('unhandledRejection', (e) => fail(`unexpected error: ${e?.stack ?? e}`));
// Started detached: never outlive a flow that hangs.
setTimeout(() => fail(`gave up after ${TIMEOUT_MS * 2} ms`), TIMEOUT_MS * 2).unref();

const link = realLink(process.argv[2]);
try {
  if (MODE === 'fetch') log(await viaFetch(link));
  else if (MODE === 'chromium') log(await viaChromium(link));
  else fail(`OAUTH_BROWSER_MODE must be chromium or fetch, not ${MODE}`);
} catch (e) {
  fail(e?.message ?? String(e));
}
process.exit(0);
