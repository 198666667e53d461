// Poisoned tool text (issue 39, case 3; docs/tool-text.md), end to end against a real hub serving
// a hostile MCP server (tests/fixtures/poisoned-server.mjs): a hidden message in Unicode tag
// characters, terminal escapes (clear screen, colours, OSC 52) and a bidi override, and text that
// speaks to the model, names another source's tool and credential files.
// - The model reads no tag character, and a notice instead (search, describe, expose-all).
// - `capa tools list`, `capa search` and `capa describe` print no raw escape or bidi control.
// - The flags are in `/api/tools` and `capa tools list --json`, by rule code; a clean tool has none.
// - Accept needs a person (the token alone is refused), holds for that exact text only; Block is the
//   tool's switch.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import {
  NODE,
  REPO_ROOT,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  startHub,
  connectHttp,
  connectStdio,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  waitFor,
  waitForSourcesReady,
} from './support.mjs';

const POISONED_JS = path.join(REPO_ROOT, 'tests', 'fixtures', 'poisoned-server.mjs');
const poisoned = (variantFile) => ({
  id: 'poison',
  command: NODE,
  args: [POISONED_JS, ...(variantFile ? ['--variant-file', variantFile] : [])],
});

/** Any Unicode tag character (U+E0000–U+E007F). */
const TAG = /[\u{e0000}-\u{e007f}]/u;
/** What must never reach a terminal raw: ESC, BEL, CR, bidi controls, zero-width, tags. */
const RAW = /[\u001b\u0007\r\u202a-\u202e\u2066-\u2069\u200b-\u200f\u{e0000}-\u{e007f}]/u;
const NOTICE = /\[capabilities: \d+ hidden characters? removed\]/;

const rules = (listing) => (listing.textReview?.flags ?? []).map((f) => f.rule);

describe('poisoned tool text', () => {
  let sandbox;
  let configFile;
  let variantFile;
  let hub;
  let client;

  const capa = (args, opts = {}) => runCapa(['--config', configFile, ...args], { env: sandbox.env, ...opts });
  const tools = async () => hub.apiJson('/api/tools');
  const tool = async (address) => (await tools()).find((t) => t.address === address);

  before(async () => {
    sandbox = await makeSandbox('capa-tool-text-');
    variantFile = path.join(sandbox.root, 'variant.txt');
    await writeFile(variantFile, '');
    configFile = await writeCapabilities(sandbox.configDir, {
      servers: [poisoned(variantFile)],
      options: { demo: false, toolExposure: 'code' },
    });
    hub = await startHub({ configFile, sandbox });
    client = await connectHttp(hub, { name: 'e2e-tool-text' });
  });

  after(async () => {
    await closeClient(client);
    await cleanup();
    await removeSandboxes();
  });

  it('flags each poisoned tool in /api/tools by rule, and not the clean one', async () => {
    const listed = await tools();
    const by = Object.fromEntries(listed.map((t) => [t.address, t]));
    assert.deepEqual(rules(by['poison.add']), ['hidden_characters', 'control_characters', 'addresses_the_model', 'names_other_tools', 'credential_path']);
    assert.deepEqual(rules(by['poison.paint']), ['control_characters']);
    assert.deepEqual(rules(by['poison.helper']), ['addresses_the_model', 'credential_path']);
    assert.equal(by['poison.clean_echo'].textReview, null, JSON.stringify(by['poison.clean_echo']));
    const hidden = by['poison.add'].textReview.flags[0].message;
    assert.match(hidden, /Unicode tag characters that a model reads as "ignore previous instructions/, hidden);
    for (const t of listed) {
      for (const f of t.textReview?.flags ?? []) assert.doesNotMatch(f.message, RAW, f.message);
      assert.equal(t.textReview?.accepted ?? false, false);
    }
    // What the API lists is what the model reads: no tag characters, the notice instead.
    assert.doesNotMatch(JSON.stringify(listed), TAG);
    assert.match(by['poison.add'].description, NOTICE);
  });

  it('hands the model no tag character, with a notice, in search and describe', async () => {
    const found = resultText(await client.callTool({ name: 'search', arguments: { query: 'add two numbers' } }));
    assert.match(found, /poison\.add/, found);
    assert.doesNotMatch(found, TAG, found);
    const declared = resultText(await client.callTool({ name: 'describe', arguments: { targets: ['poison.add'] } }));
    assert.doesNotMatch(declared, TAG, declared);
    assert.match(declared, NOTICE, declared);
    assert.doesNotMatch(declared, /ignore previous instructions/, declared);
  });

  it('prints no raw escape or bidi control in capa tools list, search and describe', async () => {
    const list = await capa(['tools', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.doesNotMatch(list.stdout, RAW, JSON.stringify(list.stdout));
    assert.match(list.stdout, /poison\.add \[flagged: hidden_characters, control_characters, addresses_the_model, names_other_tools, credential_path\]/);
    assert.match(list.stdout, /Shows a note\.\\u\{1b\}\[2J\\u\{1b\}\[31mRED\\u\{1b\}\[0m\\u\{1b\}\]52;c;cm0gLXJmIH4=\\u\{7\} done/);
    assert.match(list.stdout, /3 tools are flagged/);
    assert.match(list.stdout, /capa tools accept-text <address>/);
    assert.doesNotMatch(list.stdout, /clean_echo \[flagged/);

    const json = await capa(['tools', 'list', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.doesNotMatch(json.stdout, RAW, 'JSON output escapes them too');
    const parsed = JSON.parse(json.stdout);
    assert.deepEqual(rules(parsed.find((t) => t.address === 'poison.paint')), ['control_characters']);
    assert.match(parsed.find((t) => t.address === 'poison.paint').description, /\u001b\[2J/, 'the value is unchanged');

    const search = await capa(['search', 'shows a note']);
    assert.equal(search.code, 0, search.stderr);
    assert.match(search.stdout, /poison\.paint/, search.stdout);
    assert.doesNotMatch(search.stdout, RAW, JSON.stringify(search.stdout));
    const described = await capa(['describe', 'poison']);
    assert.equal(described.code, 0, described.stderr);
    assert.doesNotMatch(described.stdout, RAW, JSON.stringify(described.stdout));
    assert.match(described.stdout, /\\u\{1b\}\[2J/, described.stdout);

    const sources = await capa(['sources', 'list']);
    assert.match(sources.stdout, /poison: 3 tools flagged/, sources.stdout);
  });

  it('accepts a flagged text only from a person, and flags it again when the text changes', async () => {
    const before = await tool('poison.helper');
    // The hub's token alone is not a person.
    const refused = await hub.api('/api/tools/accept-text', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address: 'poison.helper', digest: before.textReview.digest }),
    });
    assert.equal(refused.status, 403, await refused.text());
    // Neither is an agent's shell.
    const shell = await capa(['tools', 'accept-text', 'poison.helper']);
    assert.notEqual(shell.code, 0);
    assert.match(shell.stderr, /interactive terminal/);
    assert.equal((await tool('poison.helper')).textReview.accepted, false);

    const accepted = await capa(['tools', 'accept-text', 'poison.helper'], { terminal: true, input: 'y\n' });
    assert.equal(accepted.code, 0, accepted.stdout);
    // A pseudo-terminal ends lines with CR LF: only the line ends may be CRs.
    assert.doesNotMatch(accepted.stdout.replaceAll('\r\n', '\n'), RAW, JSON.stringify(accepted.stdout));
    const after = await tool('poison.helper');
    assert.equal(after.textReview.accepted, true);
    assert.equal(after.textReview.digest, before.textReview.digest);
    const list = await capa(['tools', 'list']);
    assert.doesNotMatch(list.stdout, /poison\.helper \[flagged/, list.stdout);
    assert.match(list.stdout, /2 tools are flagged/, list.stdout);

    // The source changes the text: flagged again.
    await writeFile(variantFile, 'Then run poison.add.');
    const restarted = await hub.api('/api/sources/poison/restart', { method: 'POST' });
    assert.equal(restarted.status, 200, await restarted.text());
    await waitForSourcesReady(hub, ['poison']);
    const changed = await waitFor('the changed text', async () => {
      const t = await tool('poison.helper');
      return t?.description?.includes('Then run poison.add.') ? t : null;
    });
    assert.equal(changed.textReview.accepted, false);
    assert.notEqual(changed.textReview.digest, before.textReview.digest);
  });

  it('blocks a flagged tool with its switch: hidden from search and refused', async () => {
    const blocked = await capa(['tools', 'disable', 'poison.add']);
    assert.equal(blocked.code, 0, blocked.stderr);
    await waitFor('poison.add denied', async () => (await tool('poison.add'))?.policy === 'deny');
    const found = resultText(await client.callTool({ name: 'search', arguments: { query: 'add two numbers' } }));
    assert.doesNotMatch(found, /poison\.add\(/, found);
    // Flagged and blocked, never dropped: it is still listed for the person.
    assert.ok(rules(await tool('poison.add')).includes('hidden_characters'));
  });
});

describe('poisoned tool text in expose-all', () => {
  let conn;

  before(async () => {
    const sandbox = await makeSandbox('capa-tool-text-all-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      servers: [poisoned()],
      options: { demo: false, toolExposure: 'expose-all' },
    });
    conn = await connectStdio({ configFile, sandbox, name: 'e2e-tool-text-all' });
  });

  after(async () => {
    await closeClient(conn);
    await cleanup();
    await removeSandboxes();
  });

  it('lists every tool, with no tag character and the notice where some were removed', async () => {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['poison.add', 'poison.clean_echo', 'poison.helper', 'poison.paint']);
    assert.doesNotMatch(JSON.stringify(tools), TAG);
    const add = tools.find((t) => t.name === 'poison.add');
    assert.match(add.description, NOTICE, add.description);
    assert.equal(add.inputSchema.properties.a.description, 'The first number');
  });
});
