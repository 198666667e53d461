// Routes on `location.hash`: `#/sources`, `#/runs/<id>`, `#/approve/<runId>`, `#/runs?status=failed`.

export interface Route {
  /** First path segment: `welcome`, `sources`, `runs`, `approve`, … */
  page: string;
  /** The rest of the path, decoded. */
  params: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = raw.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] ?? 'welcome', params: parts.slice(1), query: new URLSearchParams(query) };
}

export function href(page: string, ...params: string[]): string {
  return `#/${[page, ...params.map(encodeURIComponent)].join('/')}`;
}
