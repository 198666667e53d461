// `capa ui` says "Opened" only when a browser opened (issue 18, item 10). The hub watches its
// opener (CAPA_BROWSER here, as `xdg-open` on a desktop) for a failure; an opener that fails, as
// `xdg-open` does without a display, makes `capa ui` (not at a terminal) fail with the reason and
// the way to get a link, and the login link it made is revoked. An opener that runs on, as a
// browser does, is an opened browser.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { makeSandbox, removeSandboxes, writeCapabilities, startHub, cleanup, runCapa, waitFor } from './support.mjs';

async function hubWithOpener(body) {
  const sandbox = await makeSandbox('capa-ui-open-');
  const script = path.join(sandbox.root, 'opener.sh');
  await writeFile(script, `#!/bin/sh\n${body}\n`);
  await chmod(script, 0o755);
  sandbox.env.CAPA_BROWSER = script;
  delete sandbox.env.CAPA_NO_BROWSER;
  const configFile = await writeCapabilities(sandbox.configDir, { options: { demo: true } });
  const hub = await startHub({ configFile, sandbox });
  return { sandbox, configFile, hub };
}

describe('capa ui and the browser', () => {
  after(async () => {
    await cleanup();
    await removeSandboxes();
  });

  it('fails with the reason when the opener fails, and never says Opened', async () => {
    const { sandbox, configFile } = await hubWithOpener('echo "no display" >&2; exit 3');
    const ran = await runCapa(['--config', configFile, 'ui'], { env: sandbox.env });
    assert.notEqual(ran.code, 0, ran.stderr);
    assert.doesNotMatch(ran.stderr, /Opened/);
    assert.match(ran.stderr, /could not open a browser/);
    assert.match(ran.stderr, /exit status: 3/);
    assert.match(ran.stderr, /capa ui --print/);
    assert.equal(ran.stdout.trim(), '', 'no link is printed to a process that is not a person');
  });

  it('says Opened when the opener runs on like a browser', async () => {
    const { sandbox, configFile } = await hubWithOpener('printf "%s\\n" "$1" > "$(dirname "$0")/opened.txt"; exec sleep 30');
    const started = Date.now();
    const ran = await runCapa(['--config', configFile, 'ui'], { env: sandbox.env });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /Opened Capabilities in your browser/);
    const opened = path.join(sandbox.root, 'opened.txt');
    await waitFor('the opener to get the page', async () => existsSync(opened) || null);
    assert.match(await readFile(opened, 'utf8'), /^file:\/\//);
    // The watch is bounded (1.5 s), not the opener's life.
    assert.ok(Date.now() - started < 15_000);
  });
});
