// Run-history filters ↔ the `GET /api/runs` query string.
import type { RunFilter, TimeWindow } from '../backend/types';

export const TIME_WINDOWS: { value: TimeWindow; label: string; ms: number | null }[] = [
  { value: 'hour', label: 'Last hour', ms: 3_600_000 },
  { value: 'day', label: 'Last 24 hours', ms: 86_400_000 },
  { value: 'week', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: 'all', label: 'Any time', ms: null },
];

export const RUN_STATUSES = [
  'completed',
  'failed',
  'denied',
  'expired',
  'awaiting_approval',
  'awaiting_connection',
  'running',
  'interrupted',
  'cancelled',
] as const;

export const DEFAULT_RUN_LIMIT = 50;

/** `?status=…&source=…&since=<epoch ms>&limit=…`; empty filters are left out. */
export function runsQuery(filter: RunFilter, nowMs: number): string {
  const params = new URLSearchParams();
  if (filter.status) params.set('status', filter.status);
  if (filter.source) params.set('source', filter.source);
  const window = TIME_WINDOWS.find((w) => w.value === filter.time);
  if (window?.ms != null) params.set('since', String(nowMs - window.ms));
  params.set('limit', String(filter.limit ?? DEFAULT_RUN_LIMIT));
  return `?${params.toString()}`;
}

/** The filters kept in the page's hash (`#/runs?status=failed&time=day`). */
export function filterFromParams(params: URLSearchParams): RunFilter {
  const filter: RunFilter = {};
  const status = params.get('status');
  const source = params.get('source');
  const time = params.get('time');
  if (status) filter.status = status;
  if (source) filter.source = source;
  if (time && TIME_WINDOWS.some((w) => w.value === time)) filter.time = time as TimeWindow;
  return filter;
}

export function filterToParams(filter: RunFilter): string {
  const params = new URLSearchParams();
  if (filter.status) params.set('status', filter.status);
  if (filter.source) params.set('source', filter.source);
  if (filter.time && filter.time !== 'all') params.set('time', filter.time);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** How an approval was decided: `approved (once)`, `denied`, `expired`, `pending`… */
export function decisionText(status: string | undefined, scope: string | null | undefined): string {
  if (!status) return 'pending';
  const scopes: Record<string, string> = { once: 'once', run: 'for the rest of the run', always: 'always' };
  return status === 'approved' && scope ? `approved (${scopes[scope] ?? scope})` : status;
}
