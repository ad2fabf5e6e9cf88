/**
 * Markers that name the read tool (issue 20, item 3) keep the engine's properties: over a session
 * whose requests offer Spillway's MCP read tool on some calls and not others, a marker once sent
 * never changes (stickiness), every marker stays within the bound and shorter than its output, and
 * from the first call that offers the tool on, every new marker names it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MarkerStyle } from '../../src/engine/config';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { markerBound, recogniseMarker } from '../../src/engine/markers';
import type { WireFormat } from '../../src/engine/types';
import { FORMATS } from '../support/arbitraries';
import { build, contentsOf, contentText, transcript, type ToolStep } from '../support/wire';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);
const STYLES: MarkerStyle[] = ['spillway', 'trimmer', 'clark', 'ai-agent', 'eino', 'oracle'];
const TOOL_NAMES = ['mcp__spillway__read_output', 'spillway__read_output', 'spillway.read_output', 'mcp_spillway_read_output'];

function toolsOf(format: WireFormat, name: string): unknown[] {
  if (format === 'openai-chat') return [{ type: 'function', function: { name, parameters: { type: 'object' } } }];
  if (format === 'openai-responses') return [{ type: 'function', name, parameters: { type: 'object' } }];
  return [{ name, input_schema: { type: 'object' } }];
}

const callArb = fc.record({
  lines: fc.integer({ min: 1, max: 1_500 }),
  word: fc.constantFrom('ok', 'ошибка', '错误', 'x'),
  offered: fc.boolean(),
});
const sessionArb = fc.record({
  format: fc.constantFrom(...FORMATS),
  style: fc.constantFrom(...STYLES),
  language: fc.constantFrom('en' as const, 'zh' as const),
  previewChars: fc.integer({ min: 0, max: 1_200 }),
  toolName: fc.constantFrom(...TOOL_NAMES),
  calls: fc.array(callArb, { minLength: 1, maxLength: 6 }),
});

describe('markers naming the read tool, as properties', () => {
  it('stay sticky, bounded and recognised, and name the tool from the first call that offers it', () => {
    // how many new markers each branch checked: the runs must reach both
    const checked = { tool: 0, command: 0 };
    fc.assert(
      fc.property(sessionArb, (s) => {
        const config = {
          preset: 'spillway',
          markerStyle: s.style,
          language: s.language,
          previewChars: s.previewChars,
          tokenizer: 'approximate',
        };
        const engine = createEngine(config, { store: new MemorySink() });
        const steps: ToolStep[] = [];
        const sent: string[] = [];
        let offered = false;
        s.calls.forEach((c, k) => {
          const output = Array.from({ length: c.lines }, (_, i) => `${c.word} ${k}.${i}`).join('\n');
          steps.push({ tool: 'bash', output });
          offered ||= c.offered;
          const body = { ...build(transcript('go', ...steps), s.format), ...(c.offered ? { tools: toolsOf(s.format, s.toolName) } : {}) };
          const p = engine.project(JSON.stringify(body), s.format, { session: 'one' });
          const contents = contentsOf(p.request, s.format).map(contentText);
          contents.forEach((text, i) => {
            const original = steps[i]!.output;
            if (text === original) return;
            expect(text.length).toBeLessThan(original.length);
            expect(text.length).toBeLessThanOrEqual(markerBound(s.previewChars));
            expect(recogniseMarker(text)).toMatch(/^sw_/);
            if (i < sent.length) expect(text).toBe(sent[i]);
            else if (offered) {
              expect(text).toContain(s.toolName);
              checked.tool++;
            } else {
              expect(text).toContain('spillway read');
              checked.command++;
            }
          });
          sent.splice(0, sent.length, ...contents);
        });
      }),
      { numRuns: RUNS },
    );
    expect(checked.tool).toBeGreaterThan(0);
    expect(checked.command).toBeGreaterThan(0);
  });
});
