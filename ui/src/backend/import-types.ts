// Shapes of the Import page's API (`/api/import/*`, docs/api.md "Import"). A secret's value is
// never in any of them: only its field name and length.

/** `GET /api/import/clients`: a client's user-wide file. */
export interface ImportClient {
  client: string;
  name: string;
  path: string;
  exists: boolean;
}

/** Which file to read: a path, or a client's user-wide file. */
export type ImportChoice = { path: string } | { client: string };

export interface ImportSecretOffer {
  /** The NAME of `${secret:NAME}` (a field of the source's connection `default`). */
  field: string;
  /** Text kept before the reference (`Bearer `). */
  prefix: string;
  length: number;
  movable: boolean;
  whyNot?: string;
}

/** An `env` variable or header: its value, or for a secret only the offer. */
export interface ImportVar {
  key: string;
  value?: string;
  secret?: ImportSecretOffer;
}

export interface ImportServer {
  /** What names it in `apply` (`<project>::<name>` for a project's entry of ~/.claude.json). */
  key: string;
  name: string;
  project?: string | null;
  suggestedId: string;
  /** The id it gets: the suggestion, or with a number when that is taken. */
  id: string;
  conflict?: string | null;
  description: string;
  kind: 'stdio' | 'http';
  command?: string;
  args?: string[];
  env?: ImportVar[];
  cwd?: string | null;
  url?: string;
  headers?: ImportVar[];
  ignored: string[];
  warnings: string[];
}

/** `POST /api/import/preview`. */
export interface ImportPreview {
  file: string;
  format: string;
  servers: ImportServer[];
  skipped: { name: string; reason: string }[];
}

export interface ImportPick {
  name: string;
  id: string;
  moveSecrets: boolean;
}

/** `POST /api/import/apply`. */
export interface ImportResult {
  added: { name: string; id: string; movedSecrets: string[] }[];
  failed: { name: string; id?: string; error: string }[];
}

export interface WellKnownParam {
  key: string;
  label: string;
  hint: string;
  example: string;
}

/** `GET /api/import/well-known`: one server of the curated list. */
export interface WellKnownServer {
  key: string;
  name: string;
  description: string;
  requires: string;
  /** The command line or URL as shown (`<dir>` where a value goes). */
  shown: string;
  params: WellKnownParam[];
  secrets: { field: string; label: string; hint: string }[];
}

/** `POST /api/import/well-known`. */
export interface WellKnownInput {
  key: string;
  id: string;
  values: Record<string, string>;
  /** Write-only: goes to the keychain. */
  secrets: Record<string, string>;
}

/** What saving a connection answers besides the connection: a warning when no source uses it. */
export interface SavedConnection {
  warning?: string | null;
}
