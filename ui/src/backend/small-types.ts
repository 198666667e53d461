// Small shapes of the hub's and the app's answers, kept apart from types.ts (one file per job).

/** A tool the Tools page's search matched (`POST /api/tools/search`). */
export interface ToolMatch {
  address: string;
  score: number;
}

/** What shows the desktop app's tray icon (src-tauri/src/tray_host.rs). */
export type TrayHost = 'status_notifier' | 'x_embed' | 'none';

/** Where connection secrets are kept (`GET /api/secrets/store`): the OS keychain, or the
 * encrypted file in the data dir where none answers. */
export interface SecretStore {
  store: 'keychain' | 'file' | 'none';
  file?: string;
}
