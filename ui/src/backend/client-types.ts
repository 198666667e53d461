// The Clients page's API types (`GET /api/clients` and its preview/apply/undo; docs/api.md).

export type ClientId = 'claude-code' | 'claude-desktop' | 'cursor' | 'vscode' | 'codex';

export type ClientConnection =
  | 'not_installed'
  | 'not_connected'
  | 'connected'
  | 'outdated'
  | 'project'
  | 'other'
  | 'unreadable';

/** One MCP client's user-wide file and where it stands with this hub. */
export interface ClientStatus {
  id: ClientId;
  name: string;
  /** Absolute path of the client's user-wide MCP file (it may not exist). */
  path: string;
  detected: boolean;
  status: ClientConnection;
  mode?: 'stdio' | 'http';
  /** The named profile its entry serves (`capa mcp --profile NAME`); absent for the default. */
  profile?: string;
  entry?: { command?: string; args: string[]; url?: string };
  error?: string;
  /** The hub keeps the file's text from before the last apply: Undo puts it back. */
  undo?: boolean;
  /** A stdio entry: whether it carries the key of a client paired with this hub (its own approval forms count). */
  paired?: boolean;
  pairedId?: string;
}

export interface ClientsView {
  /** Absolute path of the `capa` program entries and snippets run; null when none was found. */
  capaCommand: string | null;
  /** Absolute path of the hub's token file (never the token itself). */
  tokenFile: string;
  mcpUrl: string;
  entryName: string;
  /** The hub's named profiles (docs/profiles.md): a client can be connected to one of them. */
  profiles: string[];
  clients: ClientStatus[];
}

export interface ClientPreview {
  planId: string;
  client: ClientId;
  path: string;
  changes: boolean;
  action: 'created' | 'updated' | 'up_to_date' | 'removed' | 'deleted';
  /** Unified diff of the file. */
  diff: string;
  /** Applying it pairs the client (its entry gets its own key). */
  pairs?: boolean;
  warning: string | null;
}

/** A client the person paired (`GET /api/clients/paired`): its own approval forms count while `forms` is on. */
export interface PairedClient {
  id: string;
  name: string;
  forms: boolean;
  createdAtMs: number;
  lastSeenMs: number | null;
}

/** `POST /api/clients/paired`: the new pairing and its key, shown once. */
export interface NewPairing extends PairedClient {
  key: string;
}
