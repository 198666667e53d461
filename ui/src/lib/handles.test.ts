import { describe, expect, it } from 'vitest';
import { envelopeHandles, handleRows, sizeText } from './handles';

describe('kept results of a run', () => {
  it('sizes read as a person says them', () => {
    expect([sizeText(512), sizeText(24 * 1024), sizeText(10 * 1024 * 1024)]).toEqual(['512 bytes', '24.0 KB', '10.0 MB']);
  });

  it('rows name each handle, its size and whether it is still kept', () => {
    const handles = envelopeHandles({
      handles: [
        { handle: 'h_1', of: 'result', bytes: 10485760, type: 'array', preview: 'array of 5,000 items' },
        { handle: 'h_2', of: 'logs', bytes: 300, type: 'string', preview: '12 log lines' },
        'not a handle',
        null,
      ],
    });
    expect(handleRows(handles, [{ id: 'h_2', of: 'logs', type: 'string', bytes: 300, createdAtMs: 1 }])).toEqual([
      { handle: 'h_1', what: 'result (array)', size: '10.0 MB', preview: 'array of 5,000 items', kept: false },
      { handle: 'h_2', what: 'logs', size: '300 bytes', preview: '12 log lines', kept: true },
    ]);
  });

  it('an envelope without handles, or a damaged one, has none', () => {
    expect(envelopeHandles(null)).toEqual([]);
    expect(envelopeHandles({ handles: 'x' })).toEqual([]);
  });
});
