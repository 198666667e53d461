// The UI session's key. The hub's session cookie reaches every port of 127.0.0.1, so the cookie
// alone opens nothing: every request also sends this key, which only the hub's own origin holds.
// The login link lands on `/app/?session=<key>`; the key moves into this origin's storage (which
// is per scheme, host and port) and out of the address bar at once.

export const SESSION_PARAM = 'session';
const STORAGE_KEY = 'capa.session';

export interface KeyStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface Place {
  search: string;
  pathname: string;
  hash: string;
}

/**
 * Takes the key from the landing URL (and removes it from there with `replaceUrl`), else from
 * `store`. `null` when this page has none (it was not opened from a login link).
 */
export function takeSessionKey(
  place: Place,
  store: KeyStore | null,
  replaceUrl: (url: string) => void,
): string | null {
  const params = new URLSearchParams(place.search);
  const fromUrl = params.get(SESSION_PARAM);
  if (fromUrl) {
    params.delete(SESSION_PARAM);
    const rest = params.toString();
    replaceUrl(`${place.pathname}${rest ? `?${rest}` : ''}${place.hash}`);
    try {
      store?.setItem(STORAGE_KEY, fromUrl);
    } catch {
      // Storage refused (private mode): the key lives in this page only.
    }
    return fromUrl;
  }
  return storedSessionKey(store);
}

/** The key `store` holds, if it holds one and can be read. */
function storedSessionKey(store: KeyStore | null): string | null {
  try {
    return store?.getItem(STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

/** Forgets a key the hub no longer knows (the hub restarted, the session expired). */
export function forgetSessionKey(store: KeyStore | null): void {
  try {
    store?.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}

function pageStore(): KeyStore | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    return null;
  }
}

/** The key of this browser page, read once. */
export function pageSessionKey(): string | null {
  if (typeof location === 'undefined' || typeof history === 'undefined') return null;
  return takeSessionKey(location, pageStore(), (url) => history.replaceState(history.state, '', url));
}

/**
 * The key stored for this origin now: the latest login in any window or tab of it. Each login
 * also replaces the origin's session cookie, so a page that landed earlier holds a key that no
 * longer matches the cookie; it takes this one instead (http.ts).
 */
export function storedPageSessionKey(): string | null {
  return storedSessionKey(pageStore());
}

/** Forgets this origin's stored key (the hub answered that the session is gone). */
export function forgetPageSessionKey(): void {
  forgetSessionKey(pageStore());
}
