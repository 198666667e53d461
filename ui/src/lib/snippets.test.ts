import { describe, expect, it } from 'vitest';
import { KEY_PLACEHOLDER, clientSnippets, endpointUrl, httpSnippet, shellWord } from './snippets';

describe('client snippets', () => {
  const paths = { capaCommand: '/opt/Capa Apps/bin/capa' };
  const snippets = clientSnippets(paths);
  const text = (client: string) => snippets.find((s) => s.client === client)?.text;

  it('covers the four clients', () => {
    expect(snippets.map((s) => s.client)).toEqual(['Claude Code', 'Cursor', 'Codex', 'Claude Desktop']);
  });

  it('names the capa program by its absolute path, quoted for the shell', () => {
    expect(text('Claude Code')).toBe("claude mcp add --scope user capa -- '/opt/Capa Apps/bin/capa' mcp");
    const json = { mcpServers: { capa: { command: '/opt/Capa Apps/bin/capa', args: ['mcp'] } } };
    expect(JSON.parse(text('Cursor')!)).toEqual(json);
    expect(JSON.parse(text('Claude Desktop')!)).toEqual(json);
    expect(text('Codex')).toBe('[mcp_servers.capa]\ncommand = "/opt/Capa Apps/bin/capa"\nargs = ["mcp"]');
  });

  it('gives Claude Code over HTTP a key of its own, user-wide, never the token file', () => {
    const url = endpointUrl('http://127.0.0.1:7777/');
    expect(httpSnippet(url, 'capa_client_0123').text).toBe(
      "claude mcp add --scope user --transport http capa http://127.0.0.1:7777/mcp \\\n  --header 'Authorization: Bearer capa_client_0123'",
    );
    const before = httpSnippet(url, null);
    expect(before.text).toContain(KEY_PLACEHOLDER);
    expect(before.text).not.toContain('token');
    expect(before.where).toContain(url);
  });

  it('quotes shell words only when needed', () => {
    expect(shellWord('/usr/bin/capa')).toBe('/usr/bin/capa');
    expect(shellWord("/a b/it's")).toBe("'/a b/it'\\''s'");
  });
});
