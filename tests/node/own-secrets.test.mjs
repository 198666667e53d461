// The hub's own secrets are secrets too: a filesystem source rooted at the data dir reads the
// files that hold the bearer token the hub serves with and the key that signs requestState, and
// the model sees neither in clear (the token is made at each start, after the hub read the
// file's earlier one: capa-server's http.rs adds the one it serves with).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  filesystemStdio,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
} from './support.mjs';

describe("the hub's own secrets", () => {
  after(async () => {
    await cleanup();
    await removeSandboxes();
  });

  it('a source that reads the data dir hands on neither the token nor the state key', async () => {
    const sandbox = await makeSandbox('capa-own-secrets-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      servers: [filesystemStdio(sandbox.dataDir)],
      options: { toolExposure: 'code' },
    });
    const hub = await startHub({ configFile, sandbox });
    const client = await connectHttp(hub, { name: 'e2e-own-secrets' });
    try {
      const read = (file) => `
        const path = ${JSON.stringify(path.join(sandbox.dataDir, file))};
        const tool = filesystem.read_text_file ?? filesystem.read_file;
        const result = await tool({ path });
        return JSON.stringify(result);`;
      const token = await client.callTool({ name: 'execute', arguments: { code: read('token') } });
      const envelope = token.structuredContent;
      assert.equal(envelope.status, 'completed', JSON.stringify(envelope));
      const shown = JSON.stringify(token);
      assert.ok(hub.token.length >= 32);
      assert.ok(!shown.includes(hub.token), 'the token the hub serves with was handed to the model');
      assert.match(shown, /redacted/, shown);

      const key = readFileSync(path.join(sandbox.dataDir, 'state.key'));
      const keyRun = await client.callTool({ name: 'execute', arguments: { code: read('state.key') } });
      const keyShown = JSON.stringify(keyRun);
      assert.equal(keyRun.structuredContent.status, 'completed', keyShown);
      assert.ok(!keyShown.includes(key.toString('hex')), keyShown);
    } finally {
      await closeClient(client);
      await hub.stop();
    }
  });
});
