import { describe, expect, it } from 'vitest';
import { decisionText, filterFromParams, filterToParams, runsQuery } from './runs';

const NOW = 1_800_000_000_000;

describe('runsQuery', () => {
  it('sends only the limit without filters', () => {
    expect(runsQuery({}, NOW)).toBe('?limit=50');
    expect(runsQuery({ time: 'all' }, NOW)).toBe('?limit=50');
  });

  it('turns status, source and a time window into the query', () => {
    const query = new URLSearchParams(runsQuery({ status: 'awaiting_approval', source: 'everything', time: 'day', limit: 10 }, NOW));
    expect(query.get('status')).toBe('awaiting_approval');
    expect(query.get('source')).toBe('everything');
    expect(query.get('since')).toBe(String(NOW - 86_400_000));
    expect(query.get('limit')).toBe('10');
  });

  it('escapes values', () => {
    expect(runsQuery({ source: 'a&b=c' }, NOW)).toBe('?source=a%26b%3Dc&limit=50');
  });

  it('round-trips the filters through the hash', () => {
    const filter = { status: 'failed', source: 'demo', time: 'week' as const };
    expect(filterFromParams(new URLSearchParams(filterToParams(filter).slice(1)))).toEqual(filter);
    expect(filterFromParams(new URLSearchParams('time=bogus'))).toEqual({});
  });
});

describe('decisionText', () => {
  it('says how each approval was decided', () => {
    expect(decisionText('approved', 'once')).toBe('approved (once)');
    expect(decisionText('approved', 'run')).toBe('approved (for the rest of the run)');
    expect(decisionText('approved', 'always')).toBe('approved (always)');
    expect(decisionText('denied', null)).toBe('denied');
    expect(decisionText(undefined, undefined)).toBe('pending');
  });
});
