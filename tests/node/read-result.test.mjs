// Large results in direct mode (docs/profiles.md, "Large results in direct mode"): a `direct`
// profile lists `read_result`; a result over inlineResultBytes is cut with a notice naming its
// handle, and read_result's pieces put it back together byte for byte. The official TypeScript
// SDK client over Streamable HTTP; the result comes from the demo source's echo.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  closeClient,
  cleanup,
  resultText,
} from './support.mjs';

const PROFILES = `
profiles:
  direct:
    toolExposure: direct
    sources: [demo]
    limits: { inlineResultBytes: 8192 }
  bare:
    toolExposure: direct
    sources: [demo]
    readResult: false
`;

/** 200 KB of text with 1- to 4-byte characters, so that pieces meet character boundaries. */
const BIG = Array.from({ length: 20000 }, (_, i) => `${i}é€😀 `).join('');

describe('large results in direct mode', () => {
  let sandbox;
  let hub;
  const clients = [];
  const connect = async (profile) => {
    const client = await connectHttp(hub, { name: `e2e-read-${profile}`, path: `/mcp/${profile}` });
    clients.push(client);
    return client;
  };

  before(async () => {
    sandbox = await makeSandbox('capa-read-result-');
    const configFile = await writeCapabilities(sandbox.configDir, { options: { toolExposure: 'code' } });
    await appendFile(configFile, PROFILES);
    hub = await startHub({ configFile, sandbox });
  });

  after(async () => {
    for (const client of clients) await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('cuts a large result, names its handle, and read_result gives it back whole', async () => {
    const client = await connect('direct');
    const { tools } = await client.listTools();
    const read = tools.find((t) => t.name === 'read_result');
    assert.ok(read, 'a direct profile lists read_result');
    assert.equal(read.annotations.readOnlyHint, true);
    const echoed = await client.callTool({ name: 'demo.echo', arguments: { text: BIG } });
    const text = resultText(echoed);
    assert.ok(Buffer.byteLength(JSON.stringify(echoed)) <= 8192 + 512, 'the answer is within the limit');
    const handle = text.match(/kept as (h_[0-9a-f]{32})/)?.[1];
    assert.ok(handle, text);
    let offset = 0;
    let whole = '';
    let reads = 0;
    while (offset !== null) {
      const piece = await client.callTool({ name: 'read_result', arguments: { handle, offset } });
      assert.notEqual(piece.isError, true, resultText(piece));
      assert.ok(Buffer.byteLength(JSON.stringify(piece)) <= 8192 + 512, 'each piece fits the limit');
      const { data, offset: at, total, next } = piece.structuredContent;
      assert.equal(at, offset);
      assert.equal(total, Buffer.byteLength(BIG));
      whole += data;
      offset = next;
      reads += 1;
      assert.ok(reads < 200, 'pieces make progress');
    }
    assert.equal(whole, BIG, 'the pieces put the text back together');
  });

  it('refuses a handle it does not know, and another client reads none of this one\'s', async () => {
    const client = await connect('direct');
    const unknown = await client.callTool({ name: 'read_result', arguments: { handle: 'h_00000000000000000000000000000000' } });
    assert.equal(unknown.isError, true);
    const echoed = await client.callTool({ name: 'demo.echo', arguments: { text: BIG } });
    const handle = resultText(echoed).match(/kept as (h_[0-9a-f]{32})/)?.[1];
    assert.ok(handle);
    const other = await connectHttp(hub, { name: 'e2e-read-someone-else', path: '/mcp/direct' });
    clients.push(other);
    const theirs = await other.callTool({ name: 'read_result', arguments: { handle } });
    assert.equal(theirs.isError, true, 'a handle of another client reads as unknown');
  });

  it('a profile with readResult: false lists no read_result and only cuts', async () => {
    const client = await connect('bare');
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === 'read_result'));
    const echoed = await client.callTool({ name: 'demo.echo', arguments: { text: BIG } });
    assert.match(resultText(echoed), /Ask the tool for less/);
    assert.doesNotMatch(resultText(echoed), /kept as h_/);
  });
});
