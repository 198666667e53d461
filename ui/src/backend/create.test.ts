import { describe, expect, it } from 'vitest';
import { createBackend } from './create';
import { HttpBackend } from './http';
import { TauriBackend } from './tauri';

describe('createBackend', () => {
  it('uses HTTP in a browser', () => {
    const backend = createBackend({}, { fetch: async () => new Response('{}') });
    expect(backend).toBeInstanceOf(HttpBackend);
    expect(backend.kind).toBe('http');
  });

  it('uses Tauri in the app: app-only actions are commands, data stays on HTTP', async () => {
    const invoked: [string, unknown][] = [];
    const fetched: string[] = [];
    const win = { __TAURI_INTERNALS__: { invoke: async (cmd: string, args?: unknown) => void invoked.push([cmd, args]) } };
    const backend = createBackend(win, {
      fetch: async (url) => {
        fetched.push(url);
        return new Response(JSON.stringify({ ok: true, pending: [], paused: true }));
      },
    });
    expect(backend).toBeInstanceOf(TauriBackend);
    expect(backend.kind).toBe('tauri');
    await backend.pauseApprovals(true);
    await backend.openSettings();
    await backend.closeWindow();
    await backend.popupShown('run-1', 1_700_000_000_123.4);
    expect(invoked).toEqual([
      ['pause_approvals', { paused: true }],
      ['open_settings', undefined],
      ['close_window', undefined],
      ['popup_shown', { runId: 'run-1', paintedAtMs: 1_700_000_000_123 }],
    ]);
    expect((await backend.approvals()).paused).toBe(true);
    expect(fetched).toEqual(['/api/approvals']);
  });

  it('ignores a Tauri global without invoke', () => {
    expect(createBackend({ __TAURI_INTERNALS__: {} }, { fetch: async () => new Response('{}') }).kind).toBe('http');
  });
});
