// Browsers in tests: the fake browser the hub opens (CAPA_BROWSER), the forwarding page it is
// given, and a second device that signs in where the redirect back to this computer fails.
// Re-exported by support.mjs.
import { readFile, writeFile, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { waitFor } from './wait.mjs';

/**
 * A fake browser for CAPA_BROWSER: a script that appends its argument to `opened` and its whole
 * command line (`/proc/<pid>/cmdline`, what any local user can read) to `cmdlines`.
 */
export async function fakeBrowser(dir) {
  const opened = path.join(dir, 'opened.txt');
  const cmdlines = path.join(dir, 'cmdlines.txt');
  const script = path.join(dir, 'browser.sh');
  await writeFile(
    script,
    `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\ntr '\\0' ' ' < /proc/$$/cmdline >> '${cmdlines}'\necho >> '${cmdlines}'\n`,
  );
  await chmod(script, 0o755);
  const lines = async (file) => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : []);
  return { script, opened: () => lines(opened), cmdlines: () => lines(cmdlines) };
}

/**
 * The one-time link behind what the hub gave the browser: a `file://` page (0600) that forwards
 * to it, so that the link's secret never appears in a process's arguments. Throws when the
 * argument is not such a page or carries the secret itself.
 */
export async function forwardedLink(argument) {
  if (!argument.startsWith('file:///')) throw new Error(`the browser got ${argument}, not a forwarding page`);
  const html = await readFile(fileURLToPath(argument), 'utf8');
  const link = /id="target" href="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&');
  if (!link) throw new Error(`no link in the forwarding page: ${html}`);
  const secret = link.split('/').pop();
  if (argument.includes(secret)) throw new Error('the link secret is in the browser command line');
  return link;
}

/**
 * Plays a person who signs in on another device: a new context of `browser` opens the sign-in
 * `address` and clicks `button` on the consent page; that device cannot reach this computer, so
 * its redirect to the loopback callback fails (`route()` would not see it: the answers are fetched
 * by hand). Resolves the address that device's browser ended on.
 */
export async function signInOnAnotherDevice(browser, address, button = '#approve') {
  const device = await browser.newContext();
  let endedOn = null;
  await device.route('**/*', async (route) => {
    const answer = await route.fetch({ maxRedirects: 0 });
    const location = answer.headers().location;
    const to = location && new URL(location, route.request().url());
    if (answer.status() >= 300 && answer.status() < 400 && to?.hostname === '127.0.0.1' && to.pathname === '/callback') {
      endedOn = to.href;
      await route.abort('connectionrefused');
    } else {
      await route.fulfill({ response: answer });
    }
  });
  try {
    const page = await device.newPage();
    await page.goto(address);
    await page.locator(button).click();
    return await waitFor('the other device to end on the loopback address', async () => endedOn);
  } finally {
    await device.close();
  }
}
