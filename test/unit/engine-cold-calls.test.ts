/**
 * Calls that find the provider's cache cold, and the session's route (src/engine/clear-schedule.ts,
 * `coldAfter`, `routePrices`; the clear stage and the guarantee's ledger). A call sent longer after the
 * previous one than the provider keeps a prefix unused writes the whole request again, raw history
 * as much as the projection: a clear made there rewrites nothing more, so it needs no bank. The
 * guarantee holds a session to the bill of the provider it goes to, every price model when that is
 * not known.
 */
import { describe, expect, it } from 'vitest';
import {
  CACHE_PRICES,
  clearPaysBack,
  coldAfter,
  PROVIDERS,
  providerOfModel,
  routePrices,
  type CachePrices,
} from '../../src/engine/clear-schedule';
import { createEngine, type ProjectOptions } from '../../src/engine/engine';
import { CostLedger } from '../../src/engine/guarantee';
import { call, result } from '../support/chat';
import { perChar } from '../support/run';

const MINUTE = 60_000;
const anthropic = CACHE_PRICES.find((pm) => pm.name === 'anthropic')!;
const openai = CACHE_PRICES.find((pm) => pm.name === 'openai')!;

describe('coldAfter', () => {
  it("is cold past the provider's idle time and a minute for the clocks: Anthropic's 5 minutes, OpenAI's hour", () => {
    expect(coldAfter(5 * MINUTE, anthropic)).toBe(false);
    expect(coldAfter(6 * MINUTE, anthropic)).toBe(false);
    expect(coldAfter(6 * MINUTE + 1, anthropic)).toBe(true);
    expect(coldAfter(30 * MINUTE, openai)).toBe(false);
    expect(coldAfter(61 * MINUTE + 1, openai)).toBe(true);
  });

  it('waits an hour under Anthropic when the request asks for the 1-hour cache, and is never cold without a time', () => {
    expect(coldAfter(30 * MINUTE, anthropic, true)).toBe(false);
    expect(coldAfter(61 * MINUTE + 1, anthropic, true)).toBe(true);
    expect(coldAfter(undefined, anthropic)).toBe(false);
  });
});

describe('routePrices and providerOfModel', () => {
  it("keeps the route's own price models (cached from the first token and from the minimum), every model when the route is not known", () => {
    expect(routePrices('anthropic').map((pm) => pm.name)).toEqual(['anthropic', 'anthropic-min']);
    expect(routePrices('openai').map((pm) => pm.name)).toEqual(['openai', 'openai-min']);
    expect(routePrices(undefined)).toBe(CACHE_PRICES);
    expect(routePrices('deepseek')).toBe(CACHE_PRICES);
    for (const p of PROVIDERS) expect(routePrices(p).every((pm) => pm.family === p)).toBe(true);
  });

  it('reads the provider from a model name, wherever the model is served', () => {
    expect(providerOfModel('claude-sonnet-4-5-20250929')).toBe('anthropic');
    expect(providerOfModel('anthropic/claude-opus-4.5')).toBe('anthropic');
    expect(providerOfModel('gpt-5.1-codex')).toBe('openai');
    expect(providerOfModel('gpt-4o-mini')).toBe('openai-4o');
    expect(providerOfModel('deepseek-chat')).toBeUndefined();
    expect(providerOfModel(undefined)).toBeUndefined();
  });
});

describe('the ledger at a cold call', () => {
  it('charges raw history and projection a full write there, so what the projection left out is saved at the write price', () => {
    const ledger = new CostLedger([anthropic]);
    ledger.charge({ read: 0, total: 10_000 }, { read: 0, total: 10_000 });
    ledger.setCold((pm: CachePrices) => pm.family === 'anthropic');
    ledger.charge({ read: 10_000, total: 12_000 }, { read: 10_000, total: 4_000 });
    // warm, the projection would have been charged 0.1 x 4,000; cold, both sides write all they send
    expect(ledger.banked().anthropic).toBeCloseTo((12_000 - 4_000) * 1.25);
  });

  it('needs no payback of a clear where every price model the session is billed by finds the cache cold', () => {
    const plan = { running: 60_000, before: 0, freed: 5_000, calls: 3 };
    expect(clearPaysBack(plan, routePrices('anthropic'))).toBe(false);
    expect(clearPaysBack(plan, [])).toBe(true);
  });
});

/** A Chat Completions request of a session of `model`: a file written, then one bash call per output, each answered. */
function request(model: string, outputs: ReadonlyArray<{ cmd: string; out: string }>): string {
  const messages: unknown[] = [
    { role: 'user', content: 'go' },
    call('w', 'Write', { file_path: 'notes.md', content: 'W'.repeat(3_000) }),
    result('w', 'File written.'),
  ];
  outputs.forEach((o, i) => messages.push(call(`c${i}`, 'bash', { command: o.cmd }), result(`c${i}`, o.out)));
  return JSON.stringify({ model, messages });
}

describe('a clear at a cold call', () => {
  const config = {
    // nothing is offloaded on arrival: the session banks nothing a warm clear could spend; and a clear
    // holds no late read-back of what it hides (`readBacksCovered: 0`): what the cold call spares pays
    // for the clear alone here (the read-backs it holds by default: the tests below)
    offload: { enabled: false },
    clear: { triggerTokens: 4_000, keep: 1, clearAtLeastTokens: 0, inUseCalls: 0, keepGathered: false, readBacksCovered: 0 },
  };
  const outputs = [
    ...Array.from({ length: 3 }, (_, i) => ({ cmd: `cat f${i}`, out: String.fromCharCode(65 + i).repeat(2_000) })),
    ...Array.from({ length: 30 }, (_, i) => ({ cmd: `echo ${i}`, out: `ok ${i}` })),
  ];
  const PAUSE_AT = 25;
  /** Projects the session call by call (call k sends the first k - 1 outputs), the agent pausing for `pause` before call PAUSE_AT. */
  function session(
    model: string,
    opts: { pause: number; times?: boolean; provider?: string; laterProvider?: string; clearAtLeastTokens?: number },
  ) {
    const clear = { ...config.clear, ...(opts.clearAtLeastTokens !== undefined ? { clearAtLeastTokens: opts.clearAtLeastTokens } : {}) };
    const engine = createEngine({ ...config, clear }, { tokenizer: perChar });
    const start = Date.UTC(2026, 10, 29);
    const projections = [];
    for (let k = 1; k <= outputs.length + 1; k++) {
      const at = start + k * 10_000 + (k >= PAUSE_AT ? opts.pause : 0);
      const provider = k > 1 && opts.laterProvider ? opts.laterProvider : opts.provider;
      const o: ProjectOptions = { session: 's', ...(opts.times === false ? {} : { at }), ...(provider ? { provider } : {}) };
      projections.push(engine.project(request(model, outputs.slice(0, k - 1)), 'openai-chat', o));
    }
    return projections;
  }
  /** The calls that cleared something, up to and including the first; the bank the cold call filled may pay for later clears. */
  const cleared = (ps: ReturnType<typeof session>) =>
    ps.flatMap((p, k) => (p.reductions.some((r) => r.stage === 'clear' && r.fresh) ? [k + 1] : [])).slice(0, 1);

  it('is made where the route’s cache went cold, with nothing banked, and leaves the file the agent wrote alone', () => {
    const ps = session('claude-sonnet-4-5', { pause: 10 * MINUTE });
    expect(cleared(ps)).toEqual([PAUSE_AT]);
    const p = ps[PAUSE_AT - 1]!;
    expect(p.reductions.filter((r) => r.stage === 'clear').map((r) => r.result)).toContain(1);
    expect(p.inputs).toEqual([]);
  });

  it('is not made without the times, after a short pause, or while another price model of an unknown route still holds the cache', () => {
    expect(cleared(session('claude-sonnet-4-5', { pause: 10 * MINUTE, times: false }))).toEqual([]);
    expect(cleared(session('claude-sonnet-4-5', { pause: 4 * MINUTE }))).toEqual([]);
    // a model of no known provider: every price model has its say, and OpenAI keeps a prefix an hour
    expect(cleared(session('m', { pause: 10 * MINUTE }))).toEqual([]);
    expect(cleared(session('m', { pause: 2 * 60 * MINUTE }))).toEqual([PAUSE_AT]);
  });

  it('takes whatever is clearable there, however little: the minimum a warm clear must free is for the cache it would break', () => {
    // 6,000 tokens are clearable at most: never the 100,000 a warm clear is asked to free
    expect(cleared(session('claude-sonnet-4-5', { pause: 4 * MINUTE, clearAtLeastTokens: 100_000 }))).toEqual([]);
    const ps = session('claude-sonnet-4-5', { pause: 10 * MINUTE, clearAtLeastTokens: 100_000 });
    expect(cleared(ps)).toEqual([PAUSE_AT]);
    expect(ps[PAUSE_AT - 1]!.reductions.filter((r) => r.stage === 'clear' && r.fresh).map((r) => r.result)).toEqual([1, 2, 3]);
  });

  it('follows the provider the host names over the model, and the first a session is told', () => {
    expect(cleared(session('m', { pause: 10 * MINUTE, provider: 'anthropic' }))).toEqual([PAUSE_AT]);
    expect(cleared(session('m', { pause: 10 * MINUTE, provider: 'anthropic', laterProvider: 'openai' }))).toEqual([PAUSE_AT]);
    // told OpenAI, a Claude session is decided as a GPT-5 one is (with no write premium an early clear
    // can cost less than the call it rewrites, and a 10-minute pause is warm)
    const told = session('claude-sonnet-4-5', { pause: 10 * MINUTE, provider: 'openai' });
    const gpt = session('gpt-5', { pause: 10 * MINUTE });
    expect(told.map((p) => p.reductions.map((r) => `${r.stage} ${r.result}`))).toEqual(
      gpt.map((p) => p.reductions.map((r) => `${r.stage} ${r.result}`)),
    );
    expect(cleared(gpt)).not.toEqual([PAUSE_AT]);
  });

  it('rejects a provider or a time it cannot use, naming the option', () => {
    const engine = createEngine(config, { tokenizer: perChar });
    const req = request('m', outputs.slice(0, 1));
    expect(() => engine.project(req, 'openai-chat', { provider: 'azure' })).toThrow(
      /options\.provider must be one of anthropic, openai, openai-4o, got "azure"/,
    );
    expect(() => engine.project(req, 'openai-chat', { at: Number.NaN })).toThrow(/options\.at must be a time/);
  });
});
