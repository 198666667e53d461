// The one interface every page talks to. Two implementations: `HttpBackend` (a browser against the
// hub's local API) and `TauriBackend` (the desktop window, served by the hub too: app-only actions go
// through Tauri commands, everything else over HTTP). Shapes follow the hub's JSON API (docs/ui.md).

import type { ClientId, ClientPreview, ClientStatus, ClientsView, NewPairing, PairedClient } from './client-types';
export type { ClientId, ClientPreview, ClientStatus, ClientsView, NewPairing, PairedClient } from './client-types';
import type { ImportChoice, ImportClient, ImportPick, ImportPreview, ImportResult, SavedConnection, WellKnownInput, WellKnownServer } from './import-types';
export type * from './import-types';
import type { SecretStore, ToolMatch, TrayHost } from './small-types';
export type * from './small-types';

export type Decision = 'allow' | 'ask' | 'deny';
export type Choice = 'approve_once' | 'approve_run' | 'always_allow' | 'deny';

/** `GET /api/session`. */
export interface Session {
  csrf: string;
  version: string;
}

/** How the hub's own `search` ranks (`GET /api/config`, `search`; `SemanticStatus` in
 *  crates/capa-core/src/hub/semantic.rs). */
export type SearchStatus =
  /** Every tool ranks by meaning and terms. */
  | { state: 'on'; tools: number }
  /** The model embeds new tools in the background; those without a vector rank by terms. */
  | { state: 'embedding'; done: number; total: number }
  /** Terms only (BM25F): `reason` says why, `fix` how to turn search by meaning on. */
  | { state: 'off'; reason: string; fix?: string | null }
  /** The model's files are there but could not be loaded or run. */
  | { state: 'failed'; error: string };

/** `GET /api/config`: the configuration the hub runs with. */
export interface HubConfig {
  files: string[];
  toolExposure: string;
  decidedBy: string;
  upstreamTimeoutMs: number;
  demo: boolean;
  warnings: string[];
  /** Absent from hubs older than search by meaning (issue 20). */
  search?: SearchStatus | null;
}

/** A source as `GET /api/sources` lists it. */
export interface SourceStatus {
  id: string;
  description?: string | null;
  /** Command line or URL, never secrets. */
  target: string;
  /** `starting`, `ready`, `down`, `stopped` or `needs_connection`. */
  state: string;
  last_error?: string | null;
  tools: number;
  restarts?: number;
  protocol_version?: string | null;
  pid?: number | null;
  /** Connection names; the default one ends with `*`. */
  connections?: string[];
  /** `demo` (built in) or `config` (a capabilities file). */
  origin?: string;
  /** The capabilities file that declares the source. */
  file?: string | null;
  /** What the hub's bounds cut from its last tool listing (docs/limits.md). */
  limited?: string[];
  /** The definition (secret values redacted), for editing. */
  def?: SourceDefinition | null;
  /** Whether the API may change it (declared in the global file). */
  editable?: boolean;
  /** For a source that signs in with OAuth only: its sign-ins (never a token). */
  oauth?: OAuthStatus | null;
  /** Whether the person let the source ask the client's model (sampling; docs/relay.md). */
  sampling_allowed?: boolean;
}

/** An OAuth source's side of `GET /api/sources`. */
export interface OAuthStatus {
  connections: OAuthConnection[];
  /** A sign-in started from the app that has not finished, or that failed. */
  signIn: SignInProgress | null;
}

/** One sign-in of an OAuth source. */
export interface OAuthConnection {
  name: string;
  default: boolean;
  /** False once the server stopped accepting it (a refused refresh): sign in again. */
  signedIn: boolean;
}

/** A sign-in the hub waits for: the person finishes it in their browser. */
export interface SignInProgress {
  connection: string;
  state: 'waiting' | 'failed';
  /** Why it failed, in words. */
  message?: string | null;
  /** The authorization URL, for a person whose browser did not open. */
  url?: string | null;
}

/** `POST /api/sources/<id>/sign-in`. */
export interface SignInStarted {
  ok: boolean;
  connection: string;
  /** The authorization server's page the person signs in on. */
  url: string;
  /** Whether the hub could open the system browser on it. */
  opened: boolean;
}

export interface SourceDefinition {
  /** An OpenAPI source: its document, base URL and credentials by security scheme. */
  spec?: string;
  baseUrl?: string | null;
  auth?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string | null;
  url?: string;
  headers?: Record<string, string>;
  /** A URL source that signs in with OAuth (`oauth:` in its file). */
  oauth?: boolean;
}

/** `POST /api/sources` (and `PUT /api/sources/<id>` without `id`). */
export interface SourceInput {
  id: string;
  description?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** An OpenAPI source's document (a path or URL): the source is `type: openapi`. */
  spec?: string;
  /** Where an OpenAPI source's requests go, instead of the document's server. */
  baseUrl?: string;
  /** An OpenAPI source's credential per security scheme (`${secret:NAME}` references). */
  auth?: Record<string, string>;
}

/** `GET /api/tools`. */
export interface ToolListing {
  address: string;
  source: string;
  remoteName: string;
  description?: string | null;
  inputSchema: unknown;
  annotations?: Record<string, unknown> | null;
  policy: Decision | string;
  /** Its definition waits for your review (docs/pinning.md): changed since you approved it,
   * new in its source, or blocked by you. Absent: as approved. */
  review?: ToolReview;
  /** Set when the tool's text breaks a rule (docs/tool-text.md). */
  textReview?: TextReview | null;
}

/** Why a tool's text is flagged (docs/tool-text.md); stable codes. */
export type TextRule = 'hidden_characters' | 'control_characters' | 'addresses_the_model' | 'names_other_tools' | 'credential_path';

/** A flagged tool's warning: its rules, the digest of the text they were raised on (what Accept
 * names), and whether a person accepted that exact text. */
export interface TextReview {
  flags: { rule: TextRule | string; message: string }[];
  digest: string;
  accepted: boolean;
}

/** Where a tool stands against the definition you approved (docs/pinning.md). */
export type ToolReview = 'changed' | 'new' | 'blocked';

/** The parts of a definition that are pinned. */
export interface PinnedDefinition {
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  /** Every other member the source sent (`_meta`, `icons`, `execution`, …). */
  other?: Record<string, unknown>;
}

export type DefinitionPart = 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations' | 'other';

/** `GET /api/tools/changes`: a tool whose definition waits for your review. */
export interface ToolChange {
  address: string;
  source: string;
  state: ToolReview;
  parts: DefinitionPart[];
  /** What you approved. */
  approved: PinnedDefinition;
  /** What the source lists now. */
  now: PinnedDefinition;
  approvedDecision: Decision;
  nowDecision: Decision;
  blocked: boolean;
}

/** `GET /api/profiles` (docs/profiles.md): the default profile first, then each named one. */
export interface ProfileListing {
  name: string;
  default: boolean;
  /** As written (`direct`). */
  mode: string;
  /** What it serves (`expose-all` for `direct`). */
  exposure: string;
  /** Absent: every source. */
  sources?: string[];
  /** Absent: every skill. */
  skills?: string[];
  ask?: string[];
  deny?: string[];
  limits: Record<string, number>;
  description?: string;
  file?: string;
  /** Its MCP endpoint's path (`/mcp`, `/mcp/<name>`). */
  path: string;
  /** The arguments of `capa` that serve it over stdio. */
  stdioArgs: string[];
}

/** `GET /api/skills` (docs/skills.md). */
export interface SkillListing {
  name: string;
  description: string;
  active: boolean;
  /** Its SKILL.md, or the capabilities file that declares it. */
  file: string;
  requires: string[];
  /** The tool addresses its `requires` resolve to now. */
  tools: string[];
  /** Its SKILL.md's URI when MCP clients are served it. */
  uri?: string;
  /** The instructions of a skill written as a SKILL.md. */
  instructions?: string;
}

export interface PolicyRule {
  pattern: string;
  connection?: string;
  decision: Decision;
}

/** A change of the policy file that loosens it and waits for a person's confirmation. */
export interface HeldChange {
  /** A tool address, or the pattern of a new allow rule that matches no tool yet. */
  target: string;
  connection?: string;
  /** The confirmed decision; absent for a new allow rule that matches no tool yet. */
  from?: Decision;
  to: Decision;
}

/** Where a source stands after its switch moved: `held` is on in the file but waiting for a
 * person (the change came with the hub's token alone). */
export interface SourceSwitchResult {
  state: 'off' | 'on' | 'held';
  message: string;
}

/** A tool's switch after `PUT /api/tools/enabled` (docs/policies.md, "Switches"). */
export interface ToolSwitchState {
  address: string;
  enabled: boolean;
  /** Turned on in the policy file, but that waits for a person's confirmation. */
  held: boolean;
  reason: string;
}

/** `GET /api/policy`. */
export interface PolicyView {
  file: string;
  rules: PolicyRule[];
  /** What the file loosens that is held back until confirmed (docs/policies.md). */
  held: HeldChange[];
}

/** A connection as `GET /api/connections` lists it: never the secret. */
export interface Connection {
  source: string;
  name: string;
  /** Names of the secret fields stored in the keychain; `oauth` for an OAuth sign-in. */
  fields?: string[];
  default?: boolean;
  createdAtMs?: number;
  updatedAtMs?: number;
}

/** `PUT /api/connections`. The secret is write-only. */
export interface ConnectionInput {
  source: string;
  name: string;
  field?: string;
  secret: string;
  default?: boolean;
}

export type TimeWindow = 'hour' | 'day' | 'week' | 'all';

/** Filters of the run history; `runsQuery` turns them into the query string. */
export interface RunFilter {
  status?: string;
  source?: string;
  time?: TimeWindow;
  limit?: number;
}

export interface RunSummary {
  id: string;
  status: string;
  client?: string | null;
  createdAtMs?: number;
  updatedAtMs?: number;
  attempts?: number;
  /** Tool addresses the run called. */
  addresses?: string[];
  resultBytes?: number;
}

/** A journaled text the hub cut to a bound. */
export interface BoundedText {
  text: string;
  truncated: boolean;
}

export interface RunCall {
  index: number;
  address: string;
  connection?: string | null;
  arguments?: BoundedText | unknown;
  ok?: boolean;
  /** Sent, never answered: the hub stopped while the call was in flight. */
  inFlight?: boolean;
  outcome?: BoundedText | unknown;
  ms?: number;
}

export interface RunApproval {
  id?: string;
  address: string;
  callIndex?: number;
  kind?: string;
  connection?: string | null;
  /** `pending`, `approved`, `denied`, `expired`, `resolved`. */
  status?: string;
  /** For approvals: `once`, `run` or `always`. */
  scope?: string | null;
  /** Where the decision came from: `page`, `app`, `cli`, `elicitation`… */
  decidedVia?: string | null;
  decidedAtMs?: number | null;
  createdAtMs?: number;
  reason?: string;
}

export interface RunDetail extends RunSummary {
  code?: string;
  resumable?: boolean;
  envelope?: Record<string, unknown> | null;
  calls?: RunCall[];
  logs?: string[];
  approvals?: RunApproval[];
  /** Of the envelope's `handles`, those the hub still keeps (a day at most). */
  keptHandles?: KeptHandle[];
}

/** A result or log the run kept whole for `hub.read`, as the envelope names it. */
export interface ResultHandle {
  handle: string;
  of: 'result' | 'logs';
  bytes: number;
  type: string;
  preview: string;
}

/** A handle the hub still keeps. */
export interface KeptHandle {
  id: string;
  of: 'result' | 'logs';
  type: string;
  bytes: number;
  createdAtMs: number;
}

/** A piece of a kept result, as `hub.read` answers. */
export interface HandlePiece {
  data: unknown;
  offset: number;
  total: number;
  next: number | null;
}

export interface PendingApproval {
  id: string;
  runId: string;
  callIndex: number;
  /** `approval` or `connection`. */
  kind: string;
  address: string;
  source: string;
  connection?: string;
  preview: unknown;
  reason: string;
  createdAtMs: number;
  expiresAtMs: number;
  /** The client that asks, "name version" as it introduced itself (cleaned and bounded by the hub). */
  client?: string;
}

/** `GET /api/approvals`. */
export interface ApprovalsView {
  pending: PendingApproval[];
  paused: boolean;
}

export type DecideTarget = { approvalId: string } | { runId: string };

/** One message of `GET /api/events`. */
export interface HubEvent {
  pending: number;
  paused: boolean;
  /** Counts of sources by state: `{ready, failed}`. */
  sources?: Record<string, number>;
}

/** One line of a source's log (`GET /api/sources/<id>/logs`), redacted by the hub. */
export interface SourceLogLine {
  seq: number;
  /** Milliseconds since the epoch. */
  at: number;
  /** `stderr` (the server's own output) or `hub` (what the hub says about it). */
  stream: string;
  /** `info`, `warn` or `error`. */
  level: string;
  text: string;
}

/** `GET /api/sources/<id>/logs?after=<seq>`. */
export interface SourceLogPage {
  lines: SourceLogLine[];
  /** Lines the hub's ring dropped since it started (oldest first). */
  dropped: number;
  /** The `after` to ask with next. */
  next: number;
}

/** `POST /api/call`. */
export interface CallInput {
  address: string;
  arguments?: Record<string, unknown>;
  connection?: string;
  /** The pending approval an earlier answer named. */
  approval?: string;
  waitMs?: number;
  abandon?: boolean;
}

/** What `POST /api/call` answered; `ok: false` is an answer too (tool errors, approvals). */
export interface CallAnswer {
  ok: boolean;
  /** The MCP `CallToolResult`, cut to `inlineResultBytes` unless `cut` is false. */
  result?: { content?: unknown[]; structuredContent?: unknown; isError?: boolean };
  cut?: boolean;
  /** How long the tool call took in the hub, in milliseconds. */
  ms?: number;
  error?: { code: string; message: string; retryable?: boolean };
  /** The pending input when the call waits for a person. */
  approval?: PendingApproval;
}

/** An error the API answered (`{ok:false, error:{code,message}}`): pages show `message`. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  /** The whole `{ok: false, …}` body of an HTTP 200 answer, for callers that read more. */
  readonly answer: unknown;
  constructor(code: string, message: string, status = 0, answer?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.answer = answer;
  }
}

export interface Backend {
  /** `http` in a browser, `tauri` in the desktop window. */
  readonly kind: 'http' | 'tauri';
  session(): Promise<Session>;
  /** The configuration the hub runs with, and how its search ranks now. */
  config(): Promise<HubConfig>;

  sources(): Promise<SourceStatus[]>;
  addSource(source: SourceInput): Promise<void>;
  updateSource(source: SourceInput): Promise<void>;
  removeSource(id: string): Promise<void>;
  restartSource(id: string): Promise<void>;
  /** The person confirms a source that is new or changed outside the app: it starts. */
  confirmSource(id: string): Promise<void>;
  /** Starts an OAuth sign-in to `id` as `connection` (else the default one, else `personal`):
   * the hub opens the browser and waits; `sources()` says when it is done. */
  signIn(id: string, connection?: string): Promise<SignInStarted>;
  /** Finishes the waiting sign-in to `id` with the address a browser ended on (signed in on
   * another device, whose browser cannot reach this computer); `sources()` says how it ended. */
  finishSignIn(id: string, address: string): Promise<void>;

  tools(): Promise<ToolListing[]>;
  /** Tools whose definition changed since you approved it, new ones, blocked ones. */
  toolChanges(): Promise<ToolChange[]>;
  /** You accept the tool's definition as its source lists it now. */
  acceptToolChange(address: string): Promise<void>;
  /** You block the tool: hidden and refused until you accept it. */
  blockTool(address: string): Promise<void>;
  skills(): Promise<SkillListing[]>;
  profiles(): Promise<ProfileListing[]>;
  /** On/off switches: a source (`disabled: true` in its file), tools (deny rules), and every
   * tool of a source not declared read-only. */
  setSourceEnabled(id: string, enabled: boolean): Promise<SourceSwitchResult>;
  /** Lets source `id` ask the client's model (sampling), or takes that back. */
  setSourceSampling(id: string, allowed: boolean): Promise<void>;
  setToolsEnabled(addresses: string[], enabled: boolean): Promise<ToolSwitchState[]>;
  writeToolsOff(source: string): Promise<ToolSwitchState[]>;
  /** The person accepts a flagged tool's text as shown (`digest`): its warning goes until the
   * text changes. Block is `setToolsEnabled([address], false)`. */
  acceptToolText(address: string, digest: string): Promise<string>;
  /** A source's log lines after `after` (0: all the hub keeps). */
  sourceLogs(id: string, after: number): Promise<SourceLogPage>;
  /** A call through the authorizer (`POST /api/call`): answered, never thrown, when the hub
   * answers `ok: false` (a tool error, a denial, an approval to wait for). */
  callTool(call: CallInput): Promise<CallAnswer>;
  /** The tools a query matches by the hub's own search (terms and meaning), best first,
   * whatever the policy says of them; none for an empty query. */
  searchTools(query: string): Promise<ToolMatch[]>;

  policy(): Promise<PolicyView>;
  /** The person confirms the policy file as it is: held changes take effect. */
  confirmPolicy(): Promise<void>;
  setRule(rule: PolicyRule): Promise<void>;
  resetRule(pattern: string, connection?: string): Promise<void>;

  /** MCP clients' user-wide files: status, a previewed change (connect/disconnect), apply, undo. */
  clients(): Promise<ClientsView>;
  /** `profile`: connect to that named profile instead of the default one. */
  previewClient(id: ClientId, action: 'connect' | 'disconnect', profile?: string): Promise<ClientPreview>;
  applyClient(id: ClientId, planId: string): Promise<ClientStatus>;
  undoClient(id: ClientId): Promise<ClientStatus>;
  /** Paired clients: their own approval forms answer for the person (docs/security.md). */
  pairedClients(): Promise<PairedClient[]>;
  /** A person's act (UI session): the key is in the answer, once. */
  pairClient(name: string): Promise<NewPairing>;
  setPairedForms(id: string, forms: boolean): Promise<void>;
  unpairClient(id: string): Promise<void>;

  connections(): Promise<Connection[]>;
  /** Answers a warning when no source refers to the field (`${secret:NAME}`). */
  saveConnection(connection: ConnectionInput): Promise<SavedConnection>;
  removeConnection(source: string, name: string): Promise<void>;

  /** The Import page: client files, their servers, and the curated list (`/api/import/*`). */
  importClients(): Promise<ImportClient[]>;
  importPreview(choice: ImportChoice): Promise<ImportPreview>;
  importApply(choice: ImportChoice, servers: ImportPick[]): Promise<ImportResult>;
  wellKnown(): Promise<WellKnownServer[]>;
  addWellKnown(input: WellKnownInput): Promise<{ id: string }>;

  runs(filter: RunFilter): Promise<RunSummary[]>;
  run(id: string): Promise<RunDetail>;
  /** A piece of a result run `runId` kept whole (UTF-8 bytes from `offset`). */
  runHandle(runId: string, handle: string, offset?: number, length?: number): Promise<HandlePiece>;

  approvals(): Promise<ApprovalsView>;
  decide(target: DecideTarget, choice: Choice): Promise<void>;
  pauseApprovals(paused: boolean): Promise<void>;

  /** App-only: show the settings window (a no-op in a browser). */
  openSettings(): Promise<void>;
  /** App-only: close this window (a no-op in a browser, which cannot close a tab it did not open). */
  closeWindow(): Promise<void>;
  /** App-only: this popup has painted the pending call of `runId`, at `paintedAtMs` (Unix ms):
   * the app logs how long the popup took to appear (a no-op in a browser). */
  popupShown(runId: string, paintedAtMs: number): Promise<void>;
  /** App-only: this hidden, pre-loaded popup waits for a run (a no-op in a browser). */
  popupReady(): Promise<void>;
  /** App-only: open run `runId` in the settings window, keeping this popup (in a browser: false,
   * and the page follows the link itself). */
  openRun(runId: string): Promise<boolean>;
  /** Where connection secrets are kept (`GET /api/secrets/store`). */
  secretStore(): Promise<SecretStore>;
  /** App-only: what shows the app's tray icon (`none`: nothing does); null in a browser. */
  trayHost(): Promise<TrayHost | null>;
  /** App-only: quit the app (in a browser there is nothing to quit). */
  quitApp(): Promise<void>;

  /** Live updates; returns the unsubscribe function. */
  subscribe(listener: (event: HubEvent) => void): () => void;
}
