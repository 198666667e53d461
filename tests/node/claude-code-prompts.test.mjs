// Claude Code (npm @anthropic-ai/claude-code, no model and no account) pointed at the hub lists a
// source's prompts: its `-p` mode runs slash commands locally, and its first stream-json message
// (`system`/`init`) names every slash command, MCP prompts as `mcp__<server>__<prompt>`. The
// hub is `capa mcp` over stdio, as `claude mcp add` writes it, in a throwaway HOME; its source is
// server-everything. With the source declared `namespace: false` and served alone, the prompts
// keep their own names.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import {
  CAPA_BIN,
  NODE,
  NODE_MODULES,
  makeSandbox,
  removeSandboxes,
  writeCapabilities,
  everythingStdio,
  cleanup,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const CLAUDE_CLI = path.join(NODE_MODULES, '@anthropic-ai', 'claude-code', 'cli-wrapper.cjs');
const skip = skipOrFail(!existsSync(CLAUDE_CLI) && 'no @anthropic-ai/claude-code in node_modules: run `npm ci`');

/** Claude Code in `sandbox` with its own HOME; the hub as `capa --config FILE mcp`. */
async function claudeWithHub(sandbox, configFile) {
  const home = path.join(sandbox.root, 'home');
  await mkdir(home, { recursive: true });
  // No account, no telemetry, no update check: only what the listing needs.
  const env = { ...sandbox.env, HOME: home, DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1' };
  const claude = (...args) =>
    spawnSync(NODE, [CLAUDE_CLI, ...args], { env, cwd: sandbox.root, encoding: 'utf8', timeout: 120000 });
  const added = claude('mcp', 'add', 'capa', '--', CAPA_BIN, '--config', configFile, 'mcp');
  assert.equal(added.status, 0, `claude mcp add: ${added.stdout}\n${added.stderr}`);
  return claude;
}

/** The slash commands and MCP servers Claude Code's `-p` init message lists. */
function initMessage(claude) {
  const out = claude('-p', '--output-format', 'stream-json', '--verbose', '/mcp');
  const first = out.stdout.split('\n').find((line) => line.includes('"subtype":"init"'));
  assert.ok(first, `no init message from claude -p:\n${out.stdout}\n${out.stderr}`);
  return JSON.parse(first);
}

describe('Claude Code lists the sources’ prompts through the hub', { skip }, () => {
  after(async () => {
    await cleanup();
    await removeSandboxes();
  });

  it('as slash commands named under their source', async () => {
    const sandbox = await makeSandbox('capa-claude-prompts-');
    const configFile = await writeCapabilities(sandbox.configDir, { servers: [everythingStdio()] });
    const init = initMessage(await claudeWithHub(sandbox, configFile));
    assert.deepEqual(init.mcp_servers, [{ name: 'capa', status: 'connected', source: 'local' }]);
    const prompts = init.slash_commands.filter((c) => c.startsWith('mcp__capa__'));
    assert.ok(prompts.includes('mcp__capa__everything.simple-prompt'), prompts.join(', '));
    assert.ok(prompts.includes('mcp__capa__everything.args-prompt'), prompts.join(', '));
  });

  it('by their own names for a source served alone with namespace: false', async () => {
    const sandbox = await makeSandbox('capa-claude-bare-');
    const configFile = await writeCapabilities(sandbox.configDir, {
      options: { demo: false },
      servers: [everythingStdio({ namespace: false })],
    });
    const init = initMessage(await claudeWithHub(sandbox, configFile));
    const prompts = init.slash_commands.filter((c) => c.startsWith('mcp__capa__'));
    assert.ok(prompts.includes('mcp__capa__simple-prompt'), prompts.join(', '));
    assert.ok(!prompts.some((p) => p.includes('everything.')), prompts.join(', '));
  });
});
