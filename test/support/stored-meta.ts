/** The metadata a store test puts with a text: a bash offload of call_1, overridable per field. */
import type { StoredMeta } from '../../src/engine/types';

export function meta(text: string, over: Partial<StoredMeta> = {}): StoredMeta {
  return {
    tool: 'bash',
    callId: 'call_1',
    stage: 'offload',
    chars: text.length,
    bytes: Buffer.byteLength(text),
    lines: 1,
    tokens: 7,
    ...over,
  };
}
