// Skills over MCP (docs/skills.md) with the official TypeScript SDK 1.x client: a skill written as
// `skills/<name>/SKILL.md` beside the capabilities file and one of the file's `skills:`, served
// through the MCP Skills extension (`skills/list`, `skills/get`, each SKILL.md a resource), found
// by code mode's `search` and read with `describe("skill:<name>")`; over HTTP and through
// `capa mcp`'s bridge to the running hub; listed by `capa skills list --json` and on the UI's Tools
// page in Chromium (screenshot docs/screenshots/ui-skills.png). A broken SKILL.md is refused with its
// path, line and fix.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { chromium } from 'playwright-core';

import {
  makeSandbox,
  removeSandboxes,
  startHub,
  connectHttp,
  connectStdio,
  closeClient,
  cleanup,
  resultText,
  runCapa,
  waitFor,
  fakeBrowser,
  signInWithCapaUi,
  uiMissing,
  CHROMIUM,
  REPO_ROOT,
} from './support.mjs';
import { skipOrFail } from './require.mjs';

const EXTENSION = 'io.modelcontextprotocol/skills';
const Any = z.object({}).passthrough();

// Quotes, a backslash and a colon: YAML and JSON both must keep them as written.
const DESCRIPTION = 'Review the week\'s notes: "what changed", C:\\notes, and what to drop.';
const SKILL_MD = `---
name: weekly-review
description: ${JSON.stringify(DESCRIPTION)}
license: Apache-2.0
metadata:
  requires: "demo.list_notes demo.read_note"
---

# Weekly review

1. List the notes with \`demo.list_notes\`.
2. Read each one and summarise what changed this week.
`;

const CONFIG = `options: { demo: true, toolExposure: code }
servers: []
skills:
  - id: tidy-notes
    description: "Delete notes nobody needs any more."
    requires: [demo.delete_note]
`;

async function projectWithSkills() {
  const sandbox = await makeSandbox('capa-skills-');
  const configFile = path.join(sandbox.root, 'capabilities.yaml');
  await writeFile(configFile, CONFIG);
  const dir = path.join(sandbox.root, 'skills', 'weekly-review');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), SKILL_MD);
  return { sandbox, configFile };
}

const sha256 = (text) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

async function listSkills(client) {
  return (await client.request({ method: 'skills/list', params: {} }, Any)).skills;
}

describe('skills over MCP', () => {
  let project;
  let hub;
  let client;
  let opened;

  before(async () => {
    project = await projectWithSkills();
    opened = await fakeBrowser(project.sandbox.root);
    project.sandbox.env.CAPA_BROWSER = opened.script;
    delete project.sandbox.env.CAPA_NO_BROWSER;
    hub = await startHub({ configFile: project.configFile, sandbox: project.sandbox });
    client = await connectHttp(hub, { name: 'skills-test' });
  });

  after(async () => {
    await closeClient(client);
    await hub?.stop();
    await cleanup();
    await removeSandboxes();
  });

  it('declares the Skills extension and the resources capability', () => {
    const capabilities = client.getServerCapabilities();
    assert.deepEqual(capabilities.extensions?.[EXTENSION], {});
    assert.ok(capabilities.resources, 'the extension requires resources');
  });

  it('lists both skills with their front matter and a manifest whose digest matches the read', async () => {
    const skills = await listSkills(client);
    assert.deepEqual(
      skills.map((s) => s.uri),
      ['skill://tidy-notes/SKILL.md', 'skill://weekly-review/SKILL.md'],
    );
    const review = skills.find((s) => s.frontmatter.name === 'weekly-review');
    assert.equal(review.frontmatter.description, DESCRIPTION);
    assert.equal(review.frontmatter.license, 'Apache-2.0');
    assert.equal(review.frontmatter.metadata.requires, 'demo.list_notes demo.read_note');
    const read = await client.readResource({ uri: review.uri });
    assert.equal(read.contents[0].text, SKILL_MD, 'served as written');
    assert.equal(read.contents[0].mimeType, 'text/markdown');
    assert.deepEqual(review.resources, [
      { uri: review.uri, digest: sha256(SKILL_MD), size: Buffer.byteLength(SKILL_MD) },
    ]);

    // The file's skill gets a SKILL.md written by the hub, whose front matter reads back the same.
    const tidy = skills.find((s) => s.frontmatter.name === 'tidy-notes');
    const written = (await client.readResource({ uri: tidy.uri })).contents[0].text;
    assert.match(written, /^---\nname: "tidy-notes"\ndescription: "Delete notes nobody needs any more\."\n/);
    assert.match(written, /`demo\.delete_note`/);
    assert.equal(tidy.resources[0].digest, sha256(written));
  });

  it('gets one skill by URI, and answers -32602 with the URI for an unknown one', async () => {
    const got = await client.request(
      { method: 'skills/get', params: { uri: 'skill://weekly-review/SKILL.md' } },
      Any,
    );
    assert.equal(got.skill.frontmatter.name, 'weekly-review');
    for (const [method, params] of [
      ['skills/get', { uri: 'skill://nope/SKILL.md' }],
      ['resources/read', { uri: 'skill://nope/SKILL.md' }],
    ]) {
      await assert.rejects(client.request({ method, params }, Any), (e) => {
        assert.equal(e.code, -32602, method);
        assert.deepEqual(e.data, { uri: 'skill://nope/SKILL.md' });
        return true;
      });
    }
    const resources = await client.listResources();
    assert.deepEqual(
      resources.resources.map((r) => [r.uri, r.mimeType]),
      [
        ['skill://tidy-notes/SKILL.md', 'text/markdown'],
        ['skill://weekly-review/SKILL.md', 'text/markdown'],
      ],
    );
  });

  it('code mode: search finds the skill, describe gives its steps and its tools', async () => {
    const found = resultText(
      await client.callTool({ name: 'search', arguments: { query: 'weekly review of my notes' } }),
    );
    assert.match(found, /skill:weekly-review/);
    const described = resultText(
      await client.callTool({ name: 'describe', arguments: { targets: ['skill:weekly-review'] } }),
    );
    assert.match(described, /Read each one and summarise what changed this week\./);
    assert.match(described, /declare const demo/);
    assert.match(described, /list_notes|listNotes/);
    assert.doesNotMatch(described, /delete_note|deleteNote/, 'only the tools it requires');
    const unknown = await client.callTool({ name: 'describe', arguments: { targets: ['skill:nope'] } });
    assert.equal(unknown.isError, true);
    assert.match(resultText(unknown), /skill:tidy-notes, skill:weekly-review/);
  });

  it('capa skills list names both, with their tools', async () => {
    const ran = await runCapa(['--config', project.configFile, 'skills', 'list', '--json'], { env: project.sandbox.env });
    assert.equal(ran.code, 0, ran.stderr);
    const listed = JSON.parse(ran.stdout);
    const review = listed.find((s) => s.name === 'weekly-review');
    assert.deepEqual(review.tools, ['demo.list_notes', 'demo.read_note']);
    assert.equal(review.uri, 'skill://weekly-review/SKILL.md');
    assert.match(review.file, /skills\/weekly-review\/SKILL\.md$/);
    assert.match(review.instructions, /^# Weekly review/);
    const tidy = listed.find((s) => s.name === 'tidy-notes');
    assert.deepEqual(tidy.tools, ['demo.delete_note']);
    assert.equal(tidy.instructions, undefined);
    const table = await runCapa(['--config', project.configFile, 'skills', 'list'], { env: project.sandbox.env });
    assert.match(table.stdout, /weekly-review\s+2\s+Review the week/);
  });

  it('the Tools page lists the skills, with instructions folded', { skip: skipOrFail(uiMissing()) }, async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      await signInWithCapaUi(page, {
        capaArgs: ['--config', project.configFile, 'ui'],
        env: project.sandbox.env,
        opened,
      });
      // Signed in once the first page shows (the link sets the session first).
      await page.locator('main h2').first().waitFor();
      await page.goto(`${hub.url}/app/#/tools`);
      const card = page.getByRole('region', { name: 'Skills' });
      const review = card.locator('tr[data-skill="weekly-review"]');
      await review.waitFor();
      assert.equal(await review.getByText('MCP', { exact: true }).count(), 1);
      assert.deepEqual(await review.locator('ul.skill-tools code').allTextContents(), ['demo.list_notes', 'demo.read_note']);
      assert.equal(await review.getByText(DESCRIPTION, { exact: true }).count(), 1, 'quotes and backslash shown as written');
      const steps = review.locator('pre.skill-instructions');
      assert.equal(await steps.isVisible(), false, 'folded');
      await review.getByText('Instructions').click();
      assert.match(await steps.textContent(), /summarise what changed this week/);
      await card.locator('tr[data-skill="tidy-notes"]').getByText('demo.delete_note').waitFor();
      await page.screenshot({ path: path.join(REPO_ROOT, 'docs', 'screenshots', 'ui-skills.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });

  it('capa mcp bridged to the running hub serves the same skills', async () => {
    const stdio = await connectStdio({ configFile: project.configFile, sandbox: project.sandbox });
    try {
      assert.deepEqual(stdio.client.getServerCapabilities().extensions?.[EXTENSION], {});
      const skills = await listSkills(stdio.client);
      assert.deepEqual(
        skills.map((s) => s.frontmatter.name),
        ['tidy-notes', 'weekly-review'],
      );
      const read = await stdio.client.readResource({ uri: 'skill://weekly-review/SKILL.md' });
      assert.equal(read.contents[0].text, SKILL_MD);
    } finally {
      await closeClient(stdio);
    }
  });

  // Last: it changes the hub's policy.
  it('describe leaves out a tool the policy denies, and says so', async () => {
    const set = await runCapa(['--config', project.configFile, 'policy', 'set', 'demo.read_note', 'deny'], {
      env: project.sandbox.env,
    });
    assert.equal(set.code, 0, set.stderr);
    const described = await waitFor('the policy to apply', async () => {
      const text = resultText(
        await client.callTool({ name: 'describe', arguments: { targets: ['skill:weekly-review', 'skill:weekly-review'] } }),
      );
      return text.includes('hidden by your policy') ? text : null;
    });
    assert.match(described, /1 of its tools are hidden by your policy/);
    assert.match(described, /list_notes|listNotes/);
    assert.doesNotMatch(described, /read_note|readNote/);
    assert.equal(described.match(/\/\/ skill:weekly-review/g).length, 1, 'a skill named twice is described once');
  });
});

describe('a broken SKILL.md', () => {
  after(removeSandboxes);

  it('is refused with its path, line and a fix', async () => {
    const { sandbox, configFile } = await projectWithSkills();
    const dir = path.join(sandbox.root, 'skills', 'Bad_Name');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'SKILL.md'), '---\nname: other\n---\nno description\n');
    const checked = await runCapa(['config', 'check', configFile], { env: sandbox.env });
    assert.notEqual(checked.code, 0);
    const out = checked.stdout + checked.stderr;
    assert.match(out, /skills\/Bad_Name\/SKILL\.md:2:1/);
    assert.match(out, /`name: other` differs from its folder `Bad_Name`/);
    assert.match(out, /needs a `description`/);
  });
});
