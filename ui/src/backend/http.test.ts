import { describe, expect, it } from 'vitest';
import { CSRF_HEADER, HttpBackend } from './http';
import { ApiError } from './types';

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A fake hub: records requests, answers from a table of handlers. */
function fakeHub(handlers: Record<string, (seen: Seen) => { status?: number; body: unknown }>) {
  const seen: Seen[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    const request: Seen = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body ? JSON.parse(String(init.body)) : undefined,
    };
    seen.push(request);
    const key = `${request.method} ${url.split('?')[0]}`;
    const handler = handlers[key];
    const answer = handler ? handler(request) : { status: 404, body: { ok: false, error: { code: 'not_found', message: `no ${key}` } } };
    return new Response(JSON.stringify(answer.body), { status: answer.status ?? 200, headers: { 'Content-Type': 'application/json' } });
  };
  return { fetch, seen };
}

describe('HttpBackend', () => {
  it('sends the session key on every request, reads included, and never asks for it', async () => {
    const hub = fakeHub({
      'GET /api/sources': () => ({ body: [{ id: 'demo', target: 'builtin', state: 'ready', tools: 3 }] }),
      'PUT /api/policy/rule': () => ({ body: { ok: true } }),
      'POST /api/approvals/decide': () => ({ body: { ok: true, decided: 1 } }),
    });
    const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'key-1' });
    expect((await backend.sources()).map((s) => s.id)).toEqual(['demo']);
    await backend.setRule({ pattern: 'everything.get-sum', decision: 'ask' });
    await backend.decide({ approvalId: 'a1' }, 'approve_once');
    expect(hub.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/sources',
      'PUT /api/policy/rule',
      'POST /api/approvals/decide',
    ]);
    expect(hub.seen.map((s) => s.headers[CSRF_HEADER])).toEqual(['key-1', 'key-1', 'key-1']);
    expect(hub.seen[2]!.body).toEqual({ approvalId: 'a1', choice: 'approve_once' });
  });

  it('without a key sends none, and the hub refusal reaches the page', async () => {
    const hub = fakeHub({
      'GET /api/policy': () => ({ status: 401, body: { ok: false, error: { code: 'no_session', message: 'no UI session' } } }),
    });
    const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: null });
    const failure = await backend.policy().catch((e: unknown) => e);
    expect((failure as ApiError).code).toBe('no_session');
    expect(hub.seen[0]!.headers[CSRF_HEADER]).toBeUndefined();
  });

  it('reads held policy changes and confirms them and sources with the session key', async () => {
    const hub = fakeHub({
      'GET /api/policy': () => ({ body: { file: '/p.yaml', rules: [], held: [{ target: 'demo.delete_note', from: 'ask', to: 'allow' }] } }),
      'POST /api/policy/confirm': () => ({ body: { ok: true, held: [] } }),
      'POST /api/sources/planted/confirm': () => ({ body: { ok: true, id: 'planted' } }),
    });
    const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'tok-9' });
    expect((await backend.policy()).held).toEqual([{ target: 'demo.delete_note', from: 'ask', to: 'allow' }]);
    await backend.confirmPolicy();
    await backend.confirmSource('planted');
    expect(hub.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/policy',
      'POST /api/policy/confirm',
      'POST /api/sources/planted/confirm',
    ]);
    expect(hub.seen[2]!.headers[CSRF_HEADER]).toBe('tok-9');
  });

  it('turns {ok:false} into an ApiError with the hub message', async () => {
    const hub = fakeHub({
      'POST /api/sources': () => ({ status: 400, body: { ok: false, error: { code: 'invalid_source', message: 'id `Bad` is not valid' } } }),
    });
    const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null });
    const failure = await backend.addSource({ id: 'Bad', command: 'node' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe('invalid_source');
    expect((failure as ApiError).message).toBe('id `Bad` is not valid');
  });

  it('puts the run filters in the query and escapes path parts', async () => {
    const hub = fakeHub({
      'GET /api/runs': () => ({ body: { ok: true, runs: [{ id: 'r1', status: 'completed' }] } }),
      'DELETE /api/connections/git hub/work': () => ({ body: { ok: true } }),
    });
    const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, now: () => 1_000_000_000 });
    expect(await backend.runs({ status: 'failed', time: 'hour' })).toEqual([{ id: 'r1', status: 'completed' }]);
    expect(hub.seen[0]!.url).toBe('/api/runs?status=failed&since=996400000&limit=50');
    await backend.removeConnection('git hub', 'work').catch(() => {});
    expect(hub.seen.at(-1)!.url).toBe('/api/connections/git%20hub/work');
  });

  it('delivers events and ignores messages that are not JSON', () => {
    let source: { onmessage: ((m: MessageEvent) => void) | null; close: () => void; closed?: boolean } | null = null;
    const backend = new HttpBackend({
      fetch: async () => new Response('{}'),
      sessionKey: 'k 1',
      eventSource: (url) => {
        expect(url).toBe('/api/events?session=k%201');
        source = { onmessage: null, close: () => (source!.closed = true) };
        return source as unknown as EventSource;
      },
    });
    const events: unknown[] = [];
    const stop = backend.subscribe((e) => events.push(e));
    source!.onmessage!({ data: '{"pending":2,"paused":false,"sources":{}}' } as MessageEvent);
    source!.onmessage!({ data: 'ping' } as MessageEvent);
    stop();
    expect(events).toEqual([{ pending: 2, paused: false, sources: {} }]);
    expect(source!.closed).toBe(true);
  });

  describe('when another window or tab of the origin signed in later', () => {
    // Each login replaces the origin's one session cookie: the hub then refuses this page's key
    // (403 csrf) and the origin's storage holds the newer one.
    const csrfHub = (live: string) =>
      fakeHub({
        'GET /api/sources': (seen) =>
          seen.headers[CSRF_HEADER] === live
            ? { body: [] }
            : { status: 403, body: { ok: false, error: { code: 'csrf', message: 'missing or wrong X-Capa-Csrf header' } } },
      });

    it('takes the newer key, sends the refused request again once, and keeps it', async () => {
      const hub = csrfHub('key-new');
      const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'key-old', storedKey: () => 'key-new' });
      expect(await backend.sources()).toEqual([]);
      expect(await backend.sources()).toEqual([]);
      expect(hub.seen.map((s) => s.headers[CSRF_HEADER])).toEqual(['key-old', 'key-new', 'key-new']);
    });

    it('with no newer key the refusal reaches the page, sent once', async () => {
      for (const stored of ['key-old', null]) {
        const hub = csrfHub('key-other');
        const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'key-old', storedKey: () => stored, newerKeyWaitMs: 200 });
        const failure = await backend.sources().catch((e: unknown) => e);
        expect((failure as ApiError).code).toBe('csrf');
        expect(hub.seen).toHaveLength(1);
      }
    });

    it('a newer key that is refused too is not tried in a loop', async () => {
      let stored = 0;
      const hub = csrfHub('never');
      const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'k0', storedKey: () => `k${++stored}` });
      const failure = await backend.sources().catch((e: unknown) => e);
      expect((failure as ApiError).code).toBe('csrf');
      expect(hub.seen.map((s) => s.headers[CSRF_HEADER])).toEqual(['k0', 'k1']);
    });

    it('two requests refused at once are both sent again', async () => {
      const hub = csrfHub('key-new');
      const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'key-old', storedKey: () => 'key-new' });
      expect(await Promise.all([backend.sources(), backend.sources()])).toEqual([[], []]);
      expect(hub.seen.map((s) => s.headers[CSRF_HEADER]).sort()).toEqual(['key-new', 'key-new', 'key-old', 'key-old']);
    });

    it('waits a moment for the other page to store its key', async () => {
      const hub = csrfHub('key-new');
      let stored = 'key-old';
      setTimeout(() => (stored = 'key-new'), 200);
      const backend = new HttpBackend({ fetch: hub.fetch, eventSource: null, sessionKey: 'key-old', storedKey: () => stored });
      expect(await backend.sources()).toEqual([]);
    });

    it('a refused event stream takes the newer key and opens again', async () => {
      const opened: { url: string; closed: boolean; onerror: (() => void) | null }[] = [];
      let stored = 'key-old';
      const backend = new HttpBackend({
        fetch: async () => new Response('[]'),
        sessionKey: 'key-old',
        storedKey: () => stored,
        eventSource: (url) => {
          const source = { url, closed: false, onmessage: null, onerror: null, close: () => (source.closed = true) };
          opened.push(source);
          return source as unknown as EventSource;
        },
      });
      backend.subscribe(() => {});
      stored = 'key-new';
      opened[0]!.onerror!();
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(opened.map((o) => [o.url, o.closed])).toEqual([
        ['/api/events?session=key-old', true],
        ['/api/events?session=key-new', false],
      ]);
    });

    it('reopens its event streams with the newer key', async () => {
      const hub = csrfHub('key-new');
      const opened: { url: string; closed: boolean }[] = [];
      const backend = new HttpBackend({
        fetch: hub.fetch,
        sessionKey: 'key-old',
        storedKey: () => 'key-new',
        eventSource: (url) => {
          const source = { url, closed: false, onmessage: null, close: () => (source.closed = true) };
          opened.push(source);
          return source as unknown as EventSource;
        },
      });
      const stop = backend.subscribe(() => {});
      await backend.sources();
      expect(opened.map((o) => [o.url, o.closed])).toEqual([
        ['/api/events?session=key-old', true],
        ['/api/events?session=key-new', false],
      ]);
      stop();
      expect(opened[1]!.closed).toBe(true);
    });
  });
});
