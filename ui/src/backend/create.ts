// Picks the backend: Tauri when the window runs inside the app, else HTTP.
import { HttpBackend, type FetchLike } from './http';
import { TauriBackend, type TauriInternals } from './tauri';
import type { Backend } from './types';

export function createBackend(
  win: object = globalThis,
  options: { fetch?: FetchLike } = {},
): Backend {
  const internals = (win as { __TAURI_INTERNALS__?: TauriInternals }).__TAURI_INTERNALS__;
  if (internals && typeof internals.invoke === 'function') return new TauriBackend(internals, options);
  return new HttpBackend(options);
}
