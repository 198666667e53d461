// The hub's local API over fetch: same origin, the session cookie, and the session's key in
// `X-Capa-Csrf` on every request, reads included (session-key.ts says why).
import { runsQuery } from '../lib/runs';
import { SESSION_PARAM, forgetPageSessionKey, pageSessionKey, storedPageSessionKey } from './session-key';
import type { ClientId, ClientPreview, ClientStatus, ClientsView, NewPairing, PairedClient } from './client-types';
import type { ImportChoice, ImportClient, ImportPick, ImportPreview, ImportResult, SavedConnection, WellKnownInput, WellKnownServer } from './import-types';
import {
  ApiError,
  type ApprovalsView,
  type Backend,
  type CallAnswer,
  type CallInput,
  type Choice,
  type Connection,
  type ConnectionInput,
  type DecideTarget,
  type HubConfig,
  type HubEvent,
  type PolicyRule,
  type PolicyView,
  type HandlePiece,
  type RunDetail,
  type RunFilter,
  type RunSummary,
  type Session,
  type SignInStarted,
  type SourceInput,
  type SourceLogPage,
  type SourceStatus,
  type SourceSwitchResult,
  type ProfileListing,
  type SkillListing,
  type ToolChange,
  type ToolListing,
  type ToolMatch,
  type TrayHost,
  type SecretStore,
  type ToolSwitchState,
} from './types';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
export type EventSourceFactory = (url: string) => Pick<EventSource, 'onmessage' | 'onerror' | 'close'>;

export const CSRF_HEADER = 'X-Capa-Csrf';

/** A list answered bare (`[…]`) or wrapped (`{ok, <key>: […]}`). */
export function listOf<T>(body: unknown, key: string): T[] {
  if (Array.isArray(body)) return body as T[];
  if (body && typeof body === 'object') {
    const inner = (body as Record<string, unknown>)[key];
    if (Array.isArray(inner)) return inner as T[];
  }
  return [];
}

const enc = encodeURIComponent;
/** How long a refused page waits for another page's newer key to be stored (a cold window on a
 * busy machine takes seconds from its cookie to its script), and how often it looks. */
const NEWER_KEY_WAIT_MS = 5_000;
const NEWER_KEY_POLL_MS = 50;

/** An open event stream, reopened when the page takes a newer session key. */
interface Stream {
  reopen(): void;
}

export class HttpBackend implements Backend {
  readonly kind: 'http' | 'tauri' = 'http';
  private key: string | null;
  private readonly storedKey: () => string | null;
  private readonly newerKeyWaitMs: number;
  private readonly streams = new Set<Stream>();
  private readonly fetchImpl: FetchLike;
  private readonly base: string;
  private readonly events: EventSourceFactory | null;
  private readonly now: () => number;

  constructor(options: {
    fetch?: FetchLike;
    base?: string;
    eventSource?: EventSourceFactory | null;
    now?: () => number;
    /** The session's key; by default the one this page landed with (session-key.ts). */
    sessionKey?: string | null;
    /** The key the origin holds now (a later login's); by default read from its storage. */
    storedKey?: () => string | null;
    /** How long a refused request waits for a newer key (tests shorten it). */
    newerKeyWaitMs?: number;
  } = {}) {
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.base = options.base ?? '';
    this.events =
      options.eventSource !== undefined
        ? options.eventSource
        : typeof EventSource === 'undefined'
          ? null
          : (url) => new EventSource(url);
    this.now = options.now ?? Date.now;
    this.key = options.sessionKey !== undefined ? options.sessionKey : pageSessionKey();
    this.storedKey =
      options.storedKey ?? (options.sessionKey !== undefined ? () => null : storedPageSessionKey);
    this.newerKeyWaitMs = options.newerKeyWaitMs ?? NEWER_KEY_WAIT_MS;
  }

  /**
   * After the hub refused `used` (this page's key when the request left): whether another key
   * is now this page's, taken from the origin's storage, event streams included. Every login
   * (another window or tab of this origin) replaces the origin's one cookie, so only the latest
   * key matches it; without this, a settings window would lose its session the moment an
   * approval popup signs in, and the other way round. The other page stores its key once its
   * script runs, after its cookie arrived, so a refusal in between waits for it.
   */
  private async tookNewerKey(used: string | null): Promise<boolean> {
    for (let waited = 0; ; waited += NEWER_KEY_POLL_MS) {
      if (this.key !== used) return true;
      const stored = this.storedKey();
      if (stored && stored !== used) {
        this.key = stored;
        for (const stream of this.streams) stream.reopen();
        return true;
      }
      if (waited >= this.newerKeyWaitMs) return false;
      await new Promise((resolve) => setTimeout(resolve, NEWER_KEY_POLL_MS));
    }
  }

  /** One request; `{ok:false}` bodies and HTTP errors become `ApiError`. */
  async request<T>(method: string, path: string, body?: unknown, retried = false): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const used = this.key;
    if (used) headers[CSRF_HEADER] = used;
    const response = await this.fetchImpl(this.base + path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    const error =
      parsed && typeof parsed === 'object' && (parsed as { ok?: unknown }).ok === false
        ? ((parsed as { error?: { code?: string; message?: string } }).error ?? {})
        : null;
    if (!response.ok || error) {
      const code = error?.code ?? `http_${response.status}`;
      if (code === 'csrf' && used && !retried && (await this.tookNewerKey(used))) {
        return this.request<T>(method, path, body, true);
      }
      // The hub no longer knows this session (it restarted): a new login link is needed. A key
      // another page stored since is not this one's to forget.
      if (response.status === 401 && used && this.storedKey() === used) forgetPageSessionKey();
      const message =
        error?.message ?? (text.trim() || `${method} ${path} failed with HTTP ${response.status}`);
      throw new ApiError(code, message, response.status, response.ok ? parsed : undefined);
    }
    return parsed as T;
  }

  session(): Promise<Session> {
    return this.request<Session>('GET', '/api/session');
  }
  config(): Promise<HubConfig> {
    return this.request<HubConfig>('GET', '/api/config');
  }

  async clients(): Promise<ClientsView> {
    return this.request<ClientsView>('GET', '/api/clients');
  }
  async previewClient(id: ClientId, action: 'connect' | 'disconnect', profile?: string): Promise<ClientPreview> {
    const body = profile === undefined ? { action } : { action, profile };
    return this.request<ClientPreview>('POST', `/api/clients/${enc(id)}/preview`, body);
  }
  async applyClient(id: ClientId, planId: string): Promise<ClientStatus> {
    return (await this.request<{ client: ClientStatus }>('POST', `/api/clients/${enc(id)}/apply`, { planId })).client;
  }
  async undoClient(id: ClientId): Promise<ClientStatus> {
    return (await this.request<{ client: ClientStatus }>('POST', `/api/clients/${enc(id)}/undo`)).client;
  }
  async pairedClients(): Promise<PairedClient[]> {
    return this.request<PairedClient[]>('GET', '/api/clients/paired');
  }
  async pairClient(name: string): Promise<NewPairing> {
    return this.request<NewPairing>('POST', '/api/clients/paired', { name });
  }
  async setPairedForms(id: string, forms: boolean): Promise<void> {
    await this.request('PUT', `/api/clients/paired/${enc(id)}/forms`, { forms });
  }
  async unpairClient(id: string): Promise<void> {
    await this.request('DELETE', `/api/clients/paired/${enc(id)}`);
  }
  async sources(): Promise<SourceStatus[]> {
    return listOf<SourceStatus>(await this.request('GET', '/api/sources'), 'sources');
  }
  async addSource(source: SourceInput): Promise<void> {
    await this.request('POST', '/api/sources', source);
  }
  async updateSource(source: SourceInput): Promise<void> {
    const { id, ...rest } = source;
    await this.request('PUT', `/api/sources/${enc(id)}`, rest);
  }
  async removeSource(id: string): Promise<void> {
    await this.request('DELETE', `/api/sources/${enc(id)}`);
  }
  async restartSource(id: string): Promise<void> {
    await this.request('POST', `/api/sources/${enc(id)}/restart`);
  }
  async confirmSource(id: string): Promise<void> {
    await this.request('POST', `/api/sources/${enc(id)}/confirm`);
  }
  signIn(id: string, connection?: string): Promise<SignInStarted> {
    return this.request<SignInStarted>('POST', `/api/sources/${enc(id)}/sign-in`, connection ? { connection } : {});
  }
  async finishSignIn(id: string, address: string): Promise<void> {
    await this.request('POST', `/api/sources/${enc(id)}/sign-in/redirect`, { address });
  }

  async sourceLogs(id: string, after: number): Promise<SourceLogPage> {
    const page = await this.request<Partial<SourceLogPage>>('GET', `/api/sources/${enc(id)}/logs?after=${after}`);
    return { lines: page.lines ?? [], dropped: page.dropped ?? 0, next: page.next ?? after };
  }
  async callTool(call: CallInput): Promise<CallAnswer> {
    try {
      return await this.request<CallAnswer>('POST', '/api/call', call);
    } catch (error) {
      // `{ok: false, …}` from /api/call is the call's answer; HTTP failures stay errors.
      if (error instanceof ApiError && error.answer) return error.answer as CallAnswer;
      throw error;
    }
  }

  async tools(): Promise<ToolListing[]> {
    return listOf<ToolListing>(await this.request('GET', '/api/tools'), 'tools');
  }

  async toolChanges(): Promise<ToolChange[]> {
    return listOf<ToolChange>(await this.request('GET', '/api/tools/changes'), 'changes');
  }
  async acceptToolChange(address: string): Promise<void> {
    await this.request('POST', '/api/tools/accept', { address });
  }
  async blockTool(address: string): Promise<void> {
    await this.request('POST', '/api/tools/block', { address });
  }

  async skills(): Promise<SkillListing[]> {
    return listOf<SkillListing>(await this.request('GET', '/api/skills'), 'skills');
  }

  async profiles(): Promise<ProfileListing[]> {
    return listOf<ProfileListing>(await this.request('GET', '/api/profiles'), 'profiles');
  }
  setSourceEnabled(id: string, enabled: boolean): Promise<SourceSwitchResult> {
    return this.request<SourceSwitchResult>('PUT', `/api/sources/${enc(id)}/enabled`, { enabled });
  }
  async setSourceSampling(id: string, allowed: boolean): Promise<void> {
    await this.request('PUT', `/api/sources/${enc(id)}/sampling`, { allowed });
  }
  async acceptToolText(address: string, digest: string): Promise<string> {
    const answer = await this.request<{ message?: string }>('POST', '/api/tools/accept-text', { address, digest });
    return answer.message ?? `${address} is accepted.`;
  }
  async setToolsEnabled(addresses: string[], enabled: boolean): Promise<ToolSwitchState[]> {
    const answer = await this.request<{ tools?: ToolSwitchState[] }>('PUT', '/api/tools/enabled', { addresses, enabled });
    return answer.tools ?? [];
  }
  async writeToolsOff(source: string): Promise<ToolSwitchState[]> {
    const answer = await this.request<{ tools?: ToolSwitchState[] }>('POST', `/api/sources/${enc(source)}/write-tools-off`);
    return answer.tools ?? [];
  }
  async searchTools(query: string): Promise<ToolMatch[]> {
    const answer = await this.request<{ matches?: ToolMatch[] }>('POST', '/api/tools/search', { query });
    return answer.matches ?? [];
  }

  async policy(): Promise<PolicyView> {
    const view = await this.request<Partial<PolicyView>>('GET', '/api/policy');
    return { file: view.file ?? '', rules: view.rules ?? [], held: view.held ?? [] };
  }
  async confirmPolicy(): Promise<void> {
    await this.request('POST', '/api/policy/confirm');
  }
  async setRule(rule: PolicyRule): Promise<void> {
    await this.request('PUT', '/api/policy/rule', rule);
  }
  async resetRule(pattern: string, connection?: string): Promise<void> {
    await this.request('DELETE', '/api/policy/rule', connection ? { pattern, connection } : { pattern });
  }

  async connections(): Promise<Connection[]> {
    return listOf<Connection>(await this.request('GET', '/api/connections'), 'connections');
  }
  async saveConnection(connection: ConnectionInput): Promise<SavedConnection> {
    const answer = await this.request<SavedConnection | null>('PUT', '/api/connections', connection);
    return { warning: answer?.warning ?? null };
  }
  async removeConnection(source: string, name: string): Promise<void> {
    await this.request('DELETE', `/api/connections/${enc(source)}/${enc(name)}`);
  }

  async importClients(): Promise<ImportClient[]> {
    return listOf<ImportClient>(await this.request('GET', '/api/import/clients'), 'clients');
  }
  importPreview(choice: ImportChoice): Promise<ImportPreview> {
    return this.request<ImportPreview>('POST', '/api/import/preview', choice);
  }
  async importApply(choice: ImportChoice, servers: ImportPick[]): Promise<ImportResult> {
    try {
      return await this.request<ImportResult>('POST', '/api/import/apply', { ...choice, servers });
    } catch (error) {
      // `{ok: false, added, failed}`: some were not added; the answer says which and why.
      if (error instanceof ApiError && error.answer) return error.answer as ImportResult;
      throw error;
    }
  }
  async wellKnown(): Promise<WellKnownServer[]> {
    return listOf<WellKnownServer>(await this.request('GET', '/api/import/well-known'), 'servers');
  }
  addWellKnown(input: WellKnownInput): Promise<{ id: string }> {
    return this.request<{ id: string }>('POST', '/api/import/well-known', input);
  }

  async runs(filter: RunFilter): Promise<RunSummary[]> {
    return listOf<RunSummary>(await this.request('GET', `/api/runs${runsQuery(filter, this.now())}`), 'runs');
  }
  async run(id: string): Promise<RunDetail> {
    const body = await this.request<RunDetail | { run: RunDetail }>('GET', `/api/runs/${enc(id)}`);
    return 'run' in body && body.run ? { ...body, ...body.run } : (body as RunDetail);
  }

  async runHandle(runId: string, handle: string, offset = 0, length = 16 * 1024): Promise<HandlePiece> {
    const body = await this.request<{ piece: HandlePiece }>('GET', `/api/runs/${enc(runId)}/handles/${enc(handle)}?offset=${offset}&length=${length}`);
    return body.piece;
  }

  async approvals(): Promise<ApprovalsView> {
    const view = await this.request<Partial<ApprovalsView>>('GET', '/api/approvals');
    return { pending: view.pending ?? [], paused: view.paused ?? false };
  }
  async decide(target: DecideTarget, choice: Choice): Promise<void> {
    await this.request('POST', '/api/approvals/decide', { ...target, choice });
  }
  async pauseApprovals(paused: boolean): Promise<void> {
    await this.request('POST', '/api/approvals/pause', { paused });
  }

  async openSettings(): Promise<void> {}
  async closeWindow(): Promise<void> {}
  async popupShown(_runId: string, _paintedAtMs: number): Promise<void> {}
  async popupReady(): Promise<void> {}
  async openRun(_runId: string): Promise<boolean> {
    return false;
  }
  secretStore(): Promise<SecretStore> {
    return this.request<SecretStore>('GET', '/api/secrets/store');
  }
  async trayHost(): Promise<TrayHost | null> {
    return null;
  }
  async quitApp(): Promise<void> {}

  subscribe(listener: (event: HubEvent) => void): () => void {
    const events = this.events;
    if (!events) return () => {};
    const open = () => {
      const used = this.key;
      const query = used ? `?${SESSION_PARAM}=${encodeURIComponent(used)}` : '';
      const source = events(`${this.base}/api/events${query}`);
      // A stream that opens (or reconnects) after another page's login is refused, and a
      // refused EventSource does not try again: take the newer key, which reopens it.
      source.onerror = () => {
        if (used) void this.tookNewerKey(used);
      };
      source.onmessage = (message: MessageEvent) => {
        try {
          listener(JSON.parse(String(message.data)) as HubEvent);
        } catch {
          // Not ours (a comment or keep-alive): ignore.
        }
      };
      return source;
    };
    let source = open();
    const stream: Stream = {
      reopen: () => {
        source.close();
        source = open();
      },
    };
    this.streams.add(stream);
    return () => {
      this.streams.delete(stream);
      source.close();
    };
  }
}
