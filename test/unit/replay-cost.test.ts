/**
 * The replay's cost model worked out by hand: a small Anthropic session with a cache write, an image
 * and thinking blocks, under both price models; the price of a read-back; pooling; image sizes from
 * their headers. Tokens are the approximate counter's: ceil(chars / 4) per string value, plus 4 per item.
 */
import { describe, expect, it } from 'vitest';
import { billInput, fileText, readBackCall, readBackSlices, ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';
import { anthropicImageTokens, imageSize, openaiImageTokens } from '../../src/engine/images';
import type { Transcript } from '../../src/replay/readers';
import { poolReplays, replay, type ReplayTotals } from '../../src/replay/replay';
import { LONG_CLAUDE_CODE } from '../support/corpus';

const quiet = { tokenizer: 'approximate', defaultCap: 1_000_000, clear: { enabled: false } };

/** A PNG's first bytes: signature and IHDR with the given size (what the base64 header decoder reads). */
function pngBase64(width: number, height: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b.toString('base64').slice(0, 44); // 33 bytes = 44 base64 chars: 11 tokens
}

describe('a small Anthropic session priced by hand', () => {
  const png = pngBase64(1000, 750);
  expect(png.length).toBe(44);
  const t: Transcript = {
    source: 'anthropic-messages',
    wire: 'anthropic-messages',
    base: { model: 'm' },
    items: [
      // item 0: "user" 1 + "text" 1 + 4,400 chars 1,100 + 4 = 1,106
      { role: 'user', content: [{ type: 'text', text: 'a'.repeat(4400) }] },
      // item 1: "assistant" 3, thinking block (its readable text only, 400 chars 100: the signature is
      //   not billed, src/engine/thinking.ts), tool_use ("tool_use" 2, "t1" 1, "Read" 1, "/a/b.png" 2) + 4 = 113
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 't'.repeat(400), signature: 's'.repeat(800) },
          { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a/b.png' } },
        ],
      },
      // item 2: "user" 1, "tool_result" 3, "t1" 1, image block + 4 = 1,009: the engine counts the image as the
      //   dearer provider bills its 1,000 × 750 pixels (Anthropic 1,000, OpenAI 765), not as its base64's text
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }],
          },
        ],
      },
      // item 3: "assistant" 3, thinking block (its text, 200 chars 50), "text" 1, "Done." 2 + 4 = 60
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'u'.repeat(200), signature: 'v'.repeat(400) },
          { type: 'text', text: 'Done.' },
        ],
      },
      // item 4: a new prompt: "user" 1 + 400 chars 100 + 4 = 105
      { role: 'user', content: 'n'.repeat(400) },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ],
    calls: [
      { end: 1, reply: '{"file_path":"/a/b.png"}' },
      { end: 3, reply: 'Done.' },
      { end: 5, reply: 'ok' },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  };
  const r = replay(t, { config: quiet });

  it('counts the engine tokens the hand count says', () => {
    expect(r.calls.map((c) => c.originalTokens)).toEqual([1106, 1106 + 113 + 1009, 1106 + 113 + 1009 + 60 + 105]);
    expect(r.calls.every((c) => c.projectedTokens === c.originalTokens)).toBe(true);
  });

  it('Anthropic: the first call writes its prompt, later calls read up to the last breakpoint still a prefix', () => {
    // call 0: 1,106 tokens written at 1.25
    // call 1: thinking of the current turn billed as its text (item 1: 113, as the engine counts it), the image by
    //   pixels (1,009 - 1,000 + 1000×750/750 = 1,009): 2,228 tokens, 1,106 read (call 0's breakpoint), 1,122 written
    // call 2: a new prompt strips the earlier thinking (item 1: 13, item 3: 10); item 1 is billed
    //   differently than in call 1, so only call 0's breakpoint is a prefix: 2,243 tokens, 1,106 read
    const calls = [1106 * 1.25, 1106 * 0.1 + 1122 * 1.25, 1106 * 0.1 + 1137 * 1.25];
    r.calls.forEach((c, i) => expect(c.cost.anthropic!.raw).toBeCloseTo(calls[i]!, 9));
    r.calls.forEach((c, i) => expect(c.cost.anthropic!.projected).toBeCloseTo(calls[i]!, 9));
    expect(r.totals.cost.anthropic!.raw).toBeCloseTo(4427.45, 9);
    expect(r.totals.cost.anthropic!.relative).toBe(1);
  });

  it('OpenAI: the image in 512 px tiles, cached tokens from 1,024 in steps of 128, no write premium', () => {
    // image: 2 × 2 tiles = 85 + 4 × 170 = 765, so item 2 is 1,009 - 1,000 + 765 = 774
    // call 0: 1,106 at 1; call 1: 1,993 tokens, 1,106 shared read as 1,024; call 2: 2,008, again 1,024
    // (the GPT-5 family reads cached input at 0.1x, the GPT-4o generation at 0.5x)
    const calls = [1106, 1024 * 0.1 + 969, 1024 * 0.1 + 984];
    r.calls.forEach((c, i) => expect(c.cost.openai!.raw).toBeCloseTo(calls[i]!, 9));
    expect(r.totals.cost.openai!.raw).toBeCloseTo(3263.8, 9);
    const calls4o = [1106, 1024 * 0.5 + 969, 1024 * 0.5 + 984];
    r.calls.forEach((c, i) => expect(c.cost['openai-4o']!.raw).toBeCloseTo(calls4o[i]!, 9));
    expect(r.totals.cost['openai-4o']!.raw).toBeCloseTo(4083, 9);
  });

  it('prices the replies at the output price, apart from the input', () => {
    // replies: 24 chars (6 tokens), "Done." (2), "ok" (1)
    expect(r.totals.outputTokens).toBe(9);
    expect(r.totals.cost.anthropic!.output).toBe(45);
    expect(r.totals.cost.openai!.output).toBe(72);
    expect(r.totals.cost['openai-4o']!.output).toBe(36);
  });

  it('with nothing missed, cost with read-backs is the cost', () => {
    expect(r.calls.every((c) => c.cost.anthropic!.readBack === 0)).toBe(true);
    expect(r.totals.costWithReadBacks.anthropic).toEqual({ projected: r.totals.cost.anthropic!.projected, relative: 1 });
  });
});

describe('cost with read-backs', () => {
  // 100 lines of output; line 50 names handleRequestFoo; offloaded with no preview, so the reply misses it
  const lines = Array.from({ length: 100 }, (_, i) => (i === 50 ? 'line 50 defines handleRequestFoo here' : `line ${i} ${'x'.repeat(40)}`));
  const output = lines.join('\n');
  const t: Transcript = {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: { model: 'm' },
    items: [
      { role: 'user', content: 'q'.repeat(4400) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: output },
      { role: 'assistant', content: 'Fix handleRequestFoo' },
    ],
    calls: [
      { end: 1, reply: '' },
      { end: 3, reply: 'Fix handleRequestFoo' },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  };
  const r = replay(t, { config: { tokenizer: 'approximate', defaultCap: 1000, previewChars: 0, clear: { enabled: false } } });
  const call = r.calls[1]!;

  it('the read-back returns the lines around the identifier, five each side', () => {
    expect(readBackSlices(output, ['handleRequestFoo'])).toBe(lines.slice(45, 56).join('\n'));
    expect(readBackSlices(output, ['absent'])).toBe('');
    // a long single line is cut to 2,000 characters around the identifier
    const long = `${'y'.repeat(5000)} needle ${'z'.repeat(5000)}`;
    const s = readBackSlices(long, ['needle']);
    expect(s.length).toBe(2000);
    expect(s).toContain('needle');
  });

  it('each miss costs one more call: this call read from the cache, the read and its answer written, the read call as output', () => {
    expect(call.missed).toEqual([
      {
        id: 'handleRequestFoo',
        handle: expect.stringMatching(/^sw_/),
        cause: 'offload',
        tool: 'sh',
        callId: 'a',
        since: 1,
        arrived: 1,
        wrote: 'Fix handleRequestFoo',
      },
    ]);
    const handle = call.missed[0]!.handle!;
    const callTokens = Math.ceil(readBackCall('handleRequestFoo', handle).length / 4);
    const answer = Math.ceil(lines.slice(45, 56).join('\n').length / 4);
    const p = call.projectedTokens; // no images or thinking: billed as counted
    expect(p).toBeGreaterThan(1024);
    const anthropic = p * 0.1 + (callTokens + answer + 8) * 1.25 + callTokens * 5;
    expect(call.cost.anthropic!.readBack).toBeCloseTo(anthropic, 9);
    const total = p + callTokens + answer + 8;
    const cached = 1024 + Math.floor((p - 1024) / 128) * 128;
    expect(call.cost.openai!.readBack).toBeCloseTo(cached * 0.1 + (total - cached) + callTokens * 8, 9);
    expect(call.cost['openai-4o']!.readBack).toBeCloseTo(cached * 0.5 + (total - cached) + callTokens * 4, 9);
    const c = r.totals.cost.anthropic!;
    expect(r.totals.costWithReadBacks.anthropic!.projected).toBeCloseTo(c.projected + anthropic, 9);
    expect(r.totals.costWithReadBacks.anthropic!.relative).toBeCloseTo((c.projected + anthropic) / c.raw, 12);
    expect(r.totals.costWithReadBacks.anthropic!.relative).toBeGreaterThan(c.relative);
  });
});

describe('read-backs of several identifiers, and of file inputs', () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
  lines[50] = 'line 50 defines alphaFunction here';
  lines[53] = 'line 53 defines betaFunction here';
  lines[90] = 'line 90 defines gammaFunction here';
  const output = lines.join('\n');

  it('one read returns each part once: overlapping parts merge, the others are separated by --', () => {
    expect(readBackSlices(output, ['alphaFunction'])).toBe(lines.slice(45, 56).join('\n'));
    expect(readBackSlices(output, ['betaFunction', 'alphaFunction'])).toBe(lines.slice(45, 59).join('\n'));
    expect(readBackSlices(output, ['gammaFunction', 'alphaFunction', 'absent'])).toBe(
      `${lines.slice(45, 56).join('\n')}\n--\n${lines.slice(85, 96).join('\n')}`,
    );
    expect(readBackSlices(output, ['absent'])).toBe('');
  });

  it('the read call greps for all of them, each escaped', () => {
    expect(JSON.parse(readBackCall(['a.b', 'c(d)'], 'sw_x'))).toEqual({ handle: 'sw_x', grep: 'a\\.b|c\\(d\\)', context: 5 });
    expect(readBackCall('a.b', 'sw_x')).toBe(readBackCall(['a.b'], 'sw_x'));
  });

  it('a stored file input reads as the file it wrote: its strings, decoded', () => {
    expect(fileText(JSON.stringify({ file_path: '/a.py', content: 'x = 1\ny = 2' }))).toBe('/a.py\nx = 1\ny = 2');
    expect(fileText(JSON.stringify({ command: 'cat > f <<EOF\nbody\nEOF', edits: [{ old: 'p', new: 'q' }] }))).toBe(
      'cat > f <<EOF\nbody\nEOF\np\nq',
    );
    expect(fileText('*** Begin Patch\n+x')).toBe('*** Begin Patch\n+x');
    expect(fileText('{not json')).toBe('{not json');
  });

  const session = (tool: string, args: string, reply: string): Transcript => ({
    source: 'openai-chat',
    wire: 'openai-chat',
    base: { model: 'm' },
    items: [
      { role: 'user', content: 'q'.repeat(4400) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: tool, arguments: args } }] },
      { role: 'tool', tool_call_id: 'a', content: tool === 'sh' ? output : 'File written.' },
      { role: 'assistant', content: reply },
    ],
    calls: [
      { end: 1, reply: '' },
      { end: 3, reply },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  });
  const config = { tokenizer: 'approximate', defaultCap: 1000, previewChars: 0, clear: { enabled: false }, inputs: { minTokens: 0 } };

  it('two misses in one output cost one read: the call greps for both and the answer holds their lines once', () => {
    const r = replay(session('sh', '{}', 'Fix alphaFunction and betaFunction'), { config });
    const call = r.calls[1]!;
    expect(call.missed.map((m) => m.id)).toEqual(['alphaFunction', 'betaFunction']);
    const handle = call.missed[0]!.handle!;
    expect(call.missed[1]!.handle).toBe(handle);
    const callTokens = Math.ceil(readBackCall(['alphaFunction', 'betaFunction'], handle).length / 4);
    const answer = Math.ceil(lines.slice(45, 59).join('\n').length / 4);
    const p = call.projectedTokens;
    expect(call.cost.anthropic!.readBack).toBeCloseTo(p * 0.1 + (callTokens + answer + 8) * 1.25 + callTokens * 5, 9);
  });

  it("a miss in a file input is read back from that input's handle, as lines of the file", () => {
    const content = output;
    const r = replay(session('Write', JSON.stringify({ file_path: '/w/a.py', content }), 'Now call gammaFunction'), { config });
    const call = r.calls[1]!;
    // named by the file it wrote, with what the agent wrote around the identifier
    expect(call.missed).toEqual([
      {
        id: 'gammaFunction',
        handle: expect.stringMatching(/^sw_/),
        cause: 'input',
        tool: 'Write',
        callId: 'a',
        source: '/w/a.py',
        since: 1,
        wrote: 'Now call gammaFunction',
      },
    ]);
    const callTokens = Math.ceil(readBackCall(['gammaFunction'], call.missed[0]!.handle).length / 4);
    const answer = Math.ceil(lines.slice(85, 96).join('\n').length / 4);
    expect(call.cost.anthropic!.readBack).toBeCloseTo(call.projectedTokens * 0.1 + (callTokens + answer + 8) * 1.25 + callTokens * 5, 9);
  });
});

describe('poolReplays', () => {
  const totals = (
    calls: number,
    raw: number,
    projected: number,
    readBack: number,
    referenced: number,
    missed: number,
    stable: number,
    max: number,
  ): { totals: ReplayTotals } => ({
    totals: {
      calls,
      originalTokens: calls * 100,
      projectedTokens: calls * 80,
      cacheStableShare: stable,
      maxOriginalTokens: max,
      maxProjectedTokens: max - 10,
      recoverable: true,
      skippedRecords: 1,
      referencedIds: referenced,
      missedIds: missed,
      missRate: referenced ? missed / referenced : 0,
      referencedIdsBefore: referenced * 2,
      missedIdsBefore: missed * 3,
      missRateBefore: referenced ? (missed * 3) / (referenced * 2) : 0,
      cost: { anthropic: { raw, projected, relative: projected / raw, output: 10 } },
      costWithReadBacks: { anthropic: { projected: projected + readBack, relative: (projected + readBack) / raw } },
      outputTokens: 2,
      unrecoverable: [],
    },
  });

  it('pools sums: costs and misses are ratios of sums, not means of ratios', () => {
    const p = poolReplays([totals(11, 1000, 500, 100, 10, 1, 1, 300), totals(3, 100, 100, 0, 90, 0, 0.5, 500)]);
    expect(p.sessions).toBe(2);
    expect(p.calls).toBe(14);
    expect(p.originalTokens).toBe(1400);
    expect(p.cost.anthropic).toEqual({ raw: 1100, projected: 600, relative: 600 / 1100, output: 20 });
    expect(p.costWithReadBacks.anthropic).toEqual({ projected: 700, relative: 700 / 1100 });
    expect(p.referencedIds).toBe(100);
    expect(p.missRate).toBe(0.01);
    expect(p).toMatchObject({ referencedIdsBefore: 200, missedIdsBefore: 3, missRateBefore: 0.015 });
    expect(p.cacheStableShare).toBeCloseTo((10 * 1 + 2 * 0.5) / 12, 12);
    expect(p.maxOriginalTokens).toBe(500);
    expect(p.skippedRecords).toBe(2);
    expect(p.recoverable).toBe(true);
  });

  it('pools nothing into empty totals', () => {
    const p = poolReplays([]);
    expect(p).toMatchObject({ sessions: 0, calls: 0, missRate: 0, cost: {}, costWithReadBacks: {} });
  });
});

describe('images are billed by pixels, from the header bytes of their data', () => {
  it('reads PNG, GIF, WebP and JPEG sizes', () => {
    expect(imageSize(pngBase64(1000, 750))).toEqual({ width: 1000, height: 750 });
    const gif = Buffer.from('GIF89a\x40\x01\xf0\x00\x00\x00', 'latin1').toString('base64');
    expect(imageSize(gif)).toEqual({ width: 320, height: 240 });
    const vp8x = Buffer.alloc(30);
    vp8x.write('RIFF', 0, 'latin1');
    vp8x.write('WEBPVP8X', 8, 'latin1');
    vp8x.writeUIntLE(799, 24, 3);
    vp8x.writeUIntLE(599, 27, 3);
    expect(imageSize(vp8x.toString('base64'))).toEqual({ width: 800, height: 600 });
    // JPEG: SOI, an APP0 segment of 16 bytes that is jumped over, then SOF0 with height 480, width 640
    const jpeg = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
      Buffer.alloc(14),
      Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03]),
    ]);
    expect(imageSize(jpeg.toString('base64'))).toEqual({ width: 640, height: 480 });
    expect(imageSize(Buffer.from('not an image at all').toString('base64'))).toBeUndefined();
    expect(imageSize('')).toBeUndefined();
  });

  it('Anthropic: width × height / 750 after fitting 1,568 px and about 1,600 tokens', () => {
    expect(anthropicImageTokens({ width: 1000, height: 750 })).toBe(1000);
    expect(anthropicImageTokens({ width: 200, height: 200 })).toBe(54);
    expect(anthropicImageTokens({ width: 4000, height: 3000 })).toBe(1600);
    expect(anthropicImageTokens(undefined)).toBe(1600);
  });

  it('OpenAI gpt-4o: 85 + 170 per 512 px tile after fitting 2,048 and a 768 px short side; low detail 85', () => {
    expect(openaiImageTokens({ width: 1024, height: 1024 })).toBe(765); // 768 × 768: 4 tiles
    expect(openaiImageTokens({ width: 2048, height: 4096 })).toBe(1105); // 768 × 1536: 6 tiles
    expect(openaiImageTokens({ width: 300, height: 200 })).toBe(255);
    expect(openaiImageTokens({ width: 4000, height: 3000 }, 'low')).toBe(85);
  });

  it('the minimum cacheable prompt and the 128-token steps', () => {
    expect(billInput(1023, 1000, ANTHROPIC_PRICES)).toMatchObject({ read: 0, written: 0, uncached: 1023, cost: 1023 });
    expect(billInput(5000, 1200, OPENAI_PRICES)).toMatchObject({ read: 1152, written: 3848 });
  });
});

describe('the long Claude Code session, offloads on arrival and clears by age', () => {
  it("bills a new prompt's dropped thinking as a cache rewrite, and read-backs add to the cost", async () => {
    const { readTranscript } = await import('../../src/replay/readers');
    const t = await readTranscript(LONG_CLAUDE_CODE);
    // the default leaves this session whole under its guarantee (docs/benchmarks.md, moredip/session-share):
    // reductions on arrival and by age give the billing something to bill
    const config = { 'offload.keepReads': 0, 'clear.inUseCalls': 0, 'inputs.when': 'arrival' };
    const r = replay(t, { config });
    expect(r.totals.calls).toBe(54); // 56 API calls, 2 of them synthetic lines Claude Code wrote itself; its resumed copy is not read twice
    expect(r.totals.recoverable).toBe(true);
    // with every call's whole input cached but the new part, raw history would cost this much under
    // Anthropic's prices; that bill knows no cache expiry, so it is compared with the calls undated
    const undated = replay({ ...t, calls: t.calls.map(({ end, reply }) => ({ end, reply })) }, { config });
    const naive = undated.calls.reduce(
      (a, c) => a + (c.originalTokens - c.rawCachedPrefixTokens) * 1.25 + c.rawCachedPrefixTokens * 0.1,
      0,
    );
    // the engine counts a thinking block as its text, never its signature (src/engine/thinking.ts); a new
    // prompt drops the earlier turns' thinking, so the provider writes again from the first of them, where
    // the naive count reads the whole common prefix: the bill is dearer than that count
    expect(undated.totals.cost.anthropic!.raw).toBeGreaterThan(naive);
    // the session pauses over 5 minutes six times: those calls write their history again
    expect(r.totals.coldCalls!.anthropic).toBe(6);
    expect(undated.totals.coldCalls!.anthropic).toBe(0);
    expect(r.totals.cost.anthropic!.raw).toBeGreaterThan(undated.totals.cost.anthropic!.raw);
    for (const k of ['anthropic', 'openai']) {
      expect(r.totals.cost[k]!.relative).toBeLessThan(1);
      expect(r.totals.costWithReadBacks[k]!.relative).toBeGreaterThanOrEqual(r.totals.cost[k]!.relative);
      const perCall = r.calls.reduce((a, c) => a + c.cost[k]!.projected + c.cost[k]!.readBack, 0);
      expect(r.totals.costWithReadBacks[k]!.projected).toBeCloseTo(perCall, 6);
    }
    // the previous definition also counted tool-call keys, builtins and short numbers (src/replay/identifiers.ts)
    expect(r.totals.referencedIdsBefore).toBeGreaterThan(500);
    expect(r.totals.referencedIds).toBeGreaterThan(300);
    expect(r.totals.referencedIds).toBeLessThan(r.totals.referencedIdsBefore);
    for (const c of r.calls) for (const m of c.missed) expect(m.id).not.toMatch(/^(?:[a-z]+|[A-Z][a-z]+)$/);
  }, 60_000);
});
