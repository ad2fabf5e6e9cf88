import { describe, expect, it } from 'vitest';
import { HANDLE_IN_TEXT, HANDLE_PATTERN, handleFor, isHandle } from '../../src/engine/handle';
import { CapValue, Handle } from '../../src/protocol';
import { parseConfig } from '../../src/engine/config';
import { READ_TOOL_INPUT_SCHEMA } from '../../src/proxy/readLoop';

// The handle's shape is written once in the engine; the protocol (which may import only zod)
// keeps a copy. These pin every place that must agree with the engine's HANDLE_PATTERN.
const samples = [
  handleFor('some output'),
  handleFor(''),
  'sw_0123456789abcdef01234567',
  'sw_0123456789ABCDEF01234567',
  'sw_0123456789abcdef0123456',
  'sw_0123456789abcdef012345678',
  'sw_../../etc/passwd000000000',
  'xx_0123456789abcdef01234567',
  ' sw_0123456789abcdef01234567',
  '',
];

describe('the handle pattern', () => {
  it("is accepted the same by the protocol's Handle as by the engine", () => {
    for (const s of samples) expect(Handle.safeParse(s).success, JSON.stringify(s)).toBe(isHandle(s));
    expect(samples.filter(isHandle)).toHaveLength(3);
  });

  it("is the read tool's input pattern", () => {
    expect(READ_TOOL_INPUT_SCHEMA.properties.handle.pattern).toBe(HANDLE_PATTERN.source);
  });

  it('finds a handle inside marker text exactly where the whole pattern would accept it', () => {
    const h = handleFor('x');
    expect(HANDLE_IN_TEXT.exec(`[spillway: … handle ${h}]`)?.[0]).toBe(h);
    expect(HANDLE_PATTERN.source).toBe(`^${HANDLE_IN_TEXT.source}$`);
  });
});

describe("the inspector's cap values", () => {
  it('are the caps the engine accepts, up to its largest', () => {
    for (const cap of [1, 8_000, 1_000_000_000, 1_000_000_001, 0, -5, 2.5, 'unlimited']) {
      const engine = parseConfig({ toolCaps: { bash: cap } }).problems.length === 0;
      expect(CapValue.safeParse(cap).success, JSON.stringify(cap)).toBe(engine);
    }
  });
});
