// The desktop window. It is served by the hub, so data goes over HTTP like in a browser; only what
// the app itself does (pause approvals from the tray's state, open settings, close this window) goes
// through Tauri commands (src-tauri/).
import { HttpBackend, type FetchLike } from './http';
import type { TrayHost } from './types';

export interface TauriInternals {
  invoke(command: string, args?: Record<string, unknown>): Promise<unknown>;
}

export class TauriBackend extends HttpBackend {
  override readonly kind = 'tauri' as const;
  private readonly tauri: TauriInternals;

  constructor(tauri: TauriInternals, options: { fetch?: FetchLike } = {}) {
    super(options);
    this.tauri = tauri;
  }

  override async pauseApprovals(paused: boolean): Promise<void> {
    await this.tauri.invoke('pause_approvals', { paused });
  }
  override async openSettings(): Promise<void> {
    await this.tauri.invoke('open_settings');
  }
  override async closeWindow(): Promise<void> {
    await this.tauri.invoke('close_window');
  }
  override async popupShown(runId: string, paintedAtMs: number): Promise<void> {
    await this.tauri.invoke('popup_shown', { runId, paintedAtMs: Math.round(paintedAtMs) });
  }
  override async popupReady(): Promise<void> {
    await this.tauri.invoke('popup_ready');
  }
  override async openRun(runId: string): Promise<boolean> {
    await this.tauri.invoke('open_run', { runId });
    return true;
  }
  override async trayHost(): Promise<TrayHost | null> {
    const state = (await this.tauri.invoke('state')) as { trayHost?: TrayHost | null } | null;
    return state?.trayHost ?? null;
  }
  override async quitApp(): Promise<void> {
    await this.tauri.invoke('quit');
  }
}
