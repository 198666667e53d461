import { describe, expect, it } from 'vitest';
import { clientSnippets, endpointUrl, shellWord } from './snippets';

describe('client snippets', () => {
  const paths = { capaCommand: '/opt/Capa Apps/bin/capa', tokenFile: '/home/u/.local/share/capabilities/token' };
  const snippets = clientSnippets(endpointUrl('http://127.0.0.1:7777/'), paths);
  const text = (client: string) => snippets.find((s) => s.client === client)?.text;

  it('covers the four clients and the HTTP endpoint', () => {
    expect(snippets.map((s) => s.client)).toEqual(['Claude Code', 'Cursor', 'Codex', 'Claude Desktop', 'Any client over HTTP']);
  });

  it('names the capa program by its absolute path, quoted for the shell', () => {
    expect(text('Claude Code')).toBe("claude mcp add --scope user capa -- '/opt/Capa Apps/bin/capa' mcp");
    const json = { mcpServers: { capa: { command: '/opt/Capa Apps/bin/capa', args: ['mcp'] } } };
    expect(JSON.parse(text('Cursor')!)).toEqual(json);
    expect(JSON.parse(text('Claude Desktop')!)).toEqual(json);
    expect(text('Codex')).toBe('[mcp_servers.capa]\ncommand = "/opt/Capa Apps/bin/capa"\nargs = ["mcp"]');
  });

  it('gives a ready header command that reads the token file, never the token', () => {
    const http = snippets.find((s) => s.client === 'Any client over HTTP')!;
    expect(http.text).toBe(
      'claude mcp add --transport http capa http://127.0.0.1:7777/mcp \\\n' +
        '  --header "Authorization: Bearer $(cat /home/u/.local/share/capabilities/token)"',
    );
    expect(http.where).toContain('/home/u/.local/share/capabilities/token');
  });

  it('quotes shell words only when needed', () => {
    expect(shellWord('/usr/bin/capa')).toBe('/usr/bin/capa');
    expect(shellWord("/a b/it's")).toBe("'/a b/it'\\''s'");
  });
});
