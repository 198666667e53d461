// `capa --config FILE mcp` over stdio, driven by the official TypeScript MCP SDK client.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

import {
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  filesystemStdio,
  connectStdio,
  closeClient,
  cleanup,
  resultText,
  unknownToolResult,
  countListChanged,
} from './support.mjs';

describe('capa mcp over stdio (embedded hub)', () => {
  let sandbox;
  let conn;
  let client;
  let fileText;
  let filePath;

  before(async () => {
    sandbox = await makeSandbox('capa-stdio-');
    fileText = `stdio file ${randomBytes(8).toString('hex')}\n`;
    filePath = path.join(sandbox.filesDir, 'hello.txt');
    await writeFile(filePath, fileText);
    const configFile = await writeCapabilities(sandbox.configDir, {
      servers: [everythingStdio(), filesystemStdio(sandbox.filesDir)],
    });
    conn = await connectStdio({ configFile, sandbox });
    client = conn.client;
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists demo.*, everything.* and filesystem.* tools', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const expected of [
      'demo.echo',
      'demo.add',
      'demo.multiply',
      'demo.divide',
      'demo.list_notes',
      'demo.read_note',
      'demo.write_note',
      'demo.delete_note',
      'everything.echo',
      'everything.get-env',
      'everything.get-sum',
      'everything.trigger-long-running-operation',
      'filesystem.read_text_file',
      'filesystem.list_directory',
    ]) {
      assert.ok(names.includes(expected), `missing ${expected} in ${names.join(', ')}`);
    }
    assert.equal(new Set(names).size, names.length, 'tool names are unique');
    for (const t of tools) {
      assert.match(t.name, /^(demo|everything|filesystem)\./, `unexpected tool ${t.name}`);
      assert.equal(t.inputSchema?.type, 'object', `${t.name} has an object input schema`);
    }
  });

  it('calls demo.add', async () => {
    const result = await client.callTool({ name: 'demo.add', arguments: { a: 2, b: 40 } });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(resultText(result).trim(), '42');
  });

  it('calls everything.echo on the upstream server', async () => {
    const message = `ping-${randomBytes(6).toString('hex')}`;
    const result = await client.callTool({ name: 'everything.echo', arguments: { message } });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(resultText(result), `Echo: ${message}`);
  });

  it('reads a file through filesystem.read_text_file', async () => {
    const result = await client.callTool({
      name: 'filesystem.read_text_file',
      arguments: { path: filePath },
    });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(resultText(result), fileText);
  });

  it('an unknown tool is an isError result naming the closest tools', async () => {
    const result = await unknownToolResult(client, 'demo.ech');
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.match(resultText(result), /unknown tool `demo\.ech`; did you mean demo\.echo/);
    assert.equal(result._meta?.['capabilities/error']?.code, 'unknown_tool', JSON.stringify(result));
    assert.equal(result._meta?.['capabilities/error']?.retryable, false);
  });

  it('a tool error (demo.divide by zero) is a result with isError', async () => {
    const result = await client.callTool({ name: 'demo.divide', arguments: { a: 1, b: 0 } });
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.match(resultText(result), /zero/i);
    // and a good division still works on the same session
    const ok = await client.callTool({ name: 'demo.divide', arguments: { a: 9, b: 3 } });
    assert.notEqual(ok.isError, true, JSON.stringify(ok));
    assert.equal(resultText(ok).trim(), '3');
  });

  it('sends no flood of tools/list_changed while nothing changes', async () => {
    const n = await countListChanged(client, 1000);
    assert.ok(n <= 2, `${n} notifications/tools/list_changed in 1 s with no change`);
  });
});
