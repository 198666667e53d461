// The "Kept results" of a run: what its envelope named in `handles` (results and logs too large to
// return inline, kept whole for `hub.read`), and whether the hub still keeps each.
import type { KeptHandle, ResultHandle } from '../backend/types';

export interface HandleRow {
  handle: string;
  /** "result (object)", "logs". */
  what: string;
  size: string;
  preview: string;
  /** Still readable: kept for a day at most, the oldest dropped first past 256 MB. */
  kept: boolean;
}

/** "512 bytes", "24.0 KB", "10.0 MB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The envelope's `handles`, read defensively (it is the run's stored JSON). */
export function envelopeHandles(envelope: Record<string, unknown> | null | undefined): ResultHandle[] {
  const list = envelope?.handles;
  if (!Array.isArray(list)) return [];
  return list.filter((h): h is ResultHandle => !!h && typeof h === 'object' && typeof (h as ResultHandle).handle === 'string');
}

export function handleRows(handles: ResultHandle[], kept: KeptHandle[] | undefined): HandleRow[] {
  const still = new Set((kept ?? []).map((k) => k.id));
  return handles.map((h) => ({
    handle: h.handle,
    what: h.of === 'logs' ? 'logs' : `result (${h.type})`,
    size: sizeText(Number(h.bytes) || 0),
    preview: String(h.preview ?? ''),
    kept: still.has(h.handle),
  }));
}
