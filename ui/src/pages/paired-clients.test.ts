import { describe, expect, it } from 'vitest';
import { keySnippets, lastSeen } from './paired-clients';

describe('paired clients', () => {
  it('says when a client was last seen in words', () => {
    const now = 10 * 86_400_000;
    expect(lastSeen(null, now)).toBe('never');
    expect(lastSeen(now - 30_000, now)).toBe('just now');
    expect(lastSeen(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(lastSeen(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(lastSeen(now - 2 * 86_400_000, now)).toBe('2 d ago');
  });

  it('puts the key where each kind of client reads it', () => {
    const { stdio, http } = keySnippets('capa_client_abc');
    expect(JSON.parse(`{${stdio}}`)).toEqual({ env: { CAPA_CLIENT_KEY: 'capa_client_abc' } });
    expect(http).toBe('Authorization: Bearer capa_client_abc');
  });
});
