/** A proxy recording's turn (src/proxy/recording.ts) with every required field, for tests that read recordings. */
import type { Turn } from '../../src/proxy/recording';

export const recordedTurn = (over: Partial<Turn> = {}): Turn => ({
  v: 1,
  session: 's_3aafffd8e775b635',
  turn: 1,
  time: '2026-11-24T23:12:00.000Z',
  path: '/v1/messages',
  format: 'anthropic-messages',
  originalBytes: 6,
  projectedBytes: 6,
  reductions: [],
  status: 200,
  durationMs: 5,
  ...over,
});
