// How to connect the common MCP clients to the hub, as copyable config.

export interface ClientSnippet {
  client: string;
  /** Where it goes. */
  where: string;
  language: 'shell' | 'json' | 'toml' | 'text';
  text: string;
}

export const STDIO_JSON = JSON.stringify({ mcpServers: { capa: { command: 'capa', args: ['mcp'] } } }, null, 2);

export function clientSnippets(endpointUrl: string): ClientSnippet[] {
  return [
    { client: 'Claude Code', where: 'Run in a terminal', language: 'shell', text: 'claude mcp add capa -- capa mcp' },
    { client: 'Cursor', where: '~/.cursor/mcp.json', language: 'json', text: STDIO_JSON },
    {
      client: 'Codex',
      where: '~/.codex/config.toml',
      language: 'toml',
      text: '[mcp_servers.capa]\ncommand = "capa"\nargs = ["mcp"]',
    },
    { client: 'Claude Desktop', where: 'claude_desktop_config.json', language: 'json', text: STDIO_JSON },
    { client: 'Any client over HTTP', where: 'Streamable HTTP endpoint; send the hub token (the file `token` in its data directory) as Authorization: Bearer', language: 'text', text: endpointUrl },
  ];
}

/** The hub's MCP endpoint for a page served from `origin`. */
export function endpointUrl(origin: string): string {
  return `${origin.replace(/\/$/, '')}/mcp`;
}
