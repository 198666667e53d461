import { describe, expect, it } from 'vitest';
import { clientSnippets, endpointUrl } from './snippets';

describe('client snippets', () => {
  const snippets = clientSnippets(endpointUrl('http://127.0.0.1:7777/'));
  const text = (client: string) => snippets.find((s) => s.client === client)?.text;

  it('covers the four clients and the HTTP endpoint', () => {
    expect(snippets.map((s) => s.client)).toEqual(['Claude Code', 'Cursor', 'Codex', 'Claude Desktop', 'Any client over HTTP']);
  });

  it('gives the exact config of each client', () => {
    expect(text('Claude Code')).toBe('claude mcp add capa -- capa mcp');
    const json = { mcpServers: { capa: { command: 'capa', args: ['mcp'] } } };
    expect(JSON.parse(text('Cursor')!)).toEqual(json);
    expect(JSON.parse(text('Claude Desktop')!)).toEqual(json);
    expect(text('Codex')).toBe('[mcp_servers.capa]\ncommand = "capa"\nargs = ["mcp"]');
    expect(text('Any client over HTTP')).toBe('http://127.0.0.1:7777/mcp');
  });
});
