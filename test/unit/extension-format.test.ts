import { describe, expect, it } from 'vitest';
import { formatAge, formatSize, newestFirst, outputPickItem, statusText, toMillis } from '../../src/extension/pure/format';

describe('formatting', () => {
  it('formats sizes and the status bar', () => {
    expect(formatSize(999)).toBe('999 chars');
    expect(formatSize(1_500)).toBe('1.5k chars');
    expect(formatSize(42_118)).toBe('42k chars');
    expect(formatSize(3_200_000)).toBe('3.2M chars');
    expect(statusText(12_345)).toBe('$(fold) Spillway: 12,345 tokens saved');
  });

  it('formats ages from ISO strings and epoch numbers', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(formatAge('2026-01-01T11:59:30Z', now)).toBe('just now');
    expect(formatAge('2026-01-01T11:30:00Z', now)).toBe('30 min ago');
    expect(formatAge(now - 3 * 3600_000, now)).toBe('3 h ago');
    expect(formatAge('2025-12-30T12:00:00Z', now)).toBe('2 d ago');
    expect(formatAge('garbage', now)).toBe('unknown time');
    expect(toMillis(1_700_000_000)).toBe(1_700_000_000_000);
  });

  it('labels a stored output with tool, call id, size and time', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const item = outputPickItem(
      {
        handle: 'sw_0123456789abcdef01234567',
        tool: 'bash',
        callId: 'call_1',
        chars: 42_118,
        lines: 900,
        tokens: 10_000,
        time: '2026-01-01T11:00:00Z',
      },
      now,
    );
    expect(item.label).toBe('bash · call_1');
    expect(item.description).toBe('42k chars, 900 lines, 10,000 tokens');
    expect(item.detail).toBe('1 h ago · sw_0123456789abcdef01234567');
  });

  it('sorts newest first', () => {
    const sorted = newestFirst([
      { time: '2026-01-01T00:00:00Z', n: 1 },
      { time: '2026-01-03T00:00:00Z', n: 3 },
      { n: 0 },
      { time: '2026-01-02T00:00:00Z', n: 2 },
    ]);
    expect(sorted.map((e) => e.n)).toEqual([3, 2, 1, 0]);
  });
});
