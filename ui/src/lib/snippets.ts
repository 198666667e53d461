// How to connect the common MCP clients to the hub, as copyable config that works when pasted: the
// absolute path of the `capa` program (the hub says which, `GET /api/clients`), the entry named
// `capa` everywhere, and for HTTP the client's own key (a paired client's: it stays valid across
// restarts, where the hub's token is new at each start).

export interface ClientSnippet {
  client: string;
  /** Where it goes. */
  where: string;
  language: 'shell' | 'json' | 'toml' | 'text';
  text: string;
}

/** What the snippets need from the hub. */
export interface SnippetPaths {
  /** Absolute path of the `capa` program; `capa` (on PATH) when the hub found none. */
  capaCommand: string;
}

/** The HTTP snippet's key before one is made. */
export const KEY_PLACEHOLDER = '<this client’s key>';

/** A word for a POSIX shell: quoted when it holds anything but safe characters. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A TOML basic string. */
function tomlString(text: string): string {
  return JSON.stringify(text);
}

export function stdioJson(capaCommand: string): string {
  return JSON.stringify({ mcpServers: { capa: { command: capaCommand, args: ['mcp'] } } }, null, 2);
}

export function clientSnippets(paths: SnippetPaths): ClientSnippet[] {
  const capa = paths.capaCommand;
  const json = stdioJson(capa);
  return [
    { client: 'Claude Code', where: 'Run in a terminal', language: 'shell', text: `claude mcp add --scope user capa -- ${shellWord(capa)} mcp` },
    { client: 'Cursor', where: '~/.cursor/mcp.json', language: 'json', text: json },
    {
      client: 'Codex',
      where: '~/.codex/config.toml',
      language: 'toml',
      text: `[mcp_servers.capa]\ncommand = ${tomlString(capa)}\nargs = ["mcp"]`,
    },
    { client: 'Claude Desktop', where: 'claude_desktop_config.json', language: 'json', text: json },
  ];
}

/** Claude Code over Streamable HTTP with a client's own key (`capa_client_…`), or the
 * placeholder until one is made. */
export function httpSnippet(endpointUrl: string, key: string | null): ClientSnippet {
  return {
    client: 'Any client over HTTP',
    where: `Streamable HTTP at ${endpointUrl}, with a key of the client's own. For Claude Code:`,
    language: 'shell',
    text: `claude mcp add --scope user --transport http capa ${shellWord(endpointUrl)} \\\n  --header ${shellWord(`Authorization: Bearer ${key ?? KEY_PLACEHOLDER}`)}`,
  };
}

/** The hub's MCP endpoint for a page served from `origin`. */
export function endpointUrl(origin: string): string {
  return `${origin.replace(/\/$/, '')}/mcp`;
}
