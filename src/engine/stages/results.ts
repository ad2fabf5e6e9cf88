/**
 * The tool results of one request as every stage sees them, and the ledger of what was decided.
 *
 * Why this module exists: the stages (offload, window, budget, clear) ask the same questions of a
 * result: its text, its size in the cap's unit, its tokens, whether it is still open to a
 * reduction. Answering them here, lazily and once per projection (a 200 KB output is decoded only
 * when a cap could be exceeded; a count is made once), keeps each stage module down to its own rule.
 *
 * Where it sits: the run (../run.ts) reads the request, recognises markers already in it
 * (recognise.ts), builds `Results`, recalls the session's decisions into a `Ledger`, then hands
 * both to each stage in order. A stage never changes either: it works on a `Draft` (its own copy
 * of the ledger's decisions) and returns a `StageOutcome`, which the run applies to the ledger
 * before the next stage. What a decision needs stored is a `StoreWrite` in the outcome; the run
 * writes them after every stage has decided. The memos in `Results` are caches of pure functions
 * of the request (a decoded text, a token count), not decisions.
 */
import { backedOffCap, readBacks, type BackoffRecord } from '../backoff';
import type { Bank, GuaranteeRecord } from '../guarantee';
import { callsThrough } from '../calls';
import { capFor, type Cap, type SpillwayConfig } from '../config';
import { resultRawLength, resultText, type ParsedRequest, type ToolResult } from '../formats';
import { decodeString, get, getString, toValue, type JValue } from '../json';
import { dataUrlBase64, IMAGE_TYPES, imageSize, imageTokens } from '../images';
import { THINKING_TYPES, thinkingText } from '../thinking';
import type { TokenCounter } from '../tokens';
import type { ClearHold, Hindsight, StageName, StoredMeta } from '../types';
import type { Recognised } from './recognise';
import type { ReferencesMemory } from './references';
import { isReadBackInCode, isReadToolName } from '../read-tool';

/** Tokens a message costs beyond its text (role, separators), as providers count them. */
const ITEM_OVERHEAD_TOKENS = 4;
/** A UTF-16 surrogate without its pair (JSON can carry one as a \ud800 escape). */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What replaces one piece of a request (a tool result or a call's input), and what that costs and saves. */
export interface Replacement {
  /** the marker that replaces the original text */
  replacement: string;
  handle: string;
  reason: string;
  originalChars: number;
  originalTokens: number;
  projectedTokens: number;
  tool: string;
  callId: string;
}

/** A stage's decision on one tool result. */
export interface Decision extends Replacement {
  stage: StageName;
  /** the replacement for the tool call's input, when clear also cleared it */
  inputReplacement?: string;
  /** tokens of the original text parts, as counted into their item */
  partsTokens?: number;
  /**
   * offloaded after use: the result reached the model verbatim in its latest round and is reduced
   * from the next call on (`offload.latestCap`), so that call rewrites the request from here
   */
  afterUse?: boolean;
  /** the result is sent as it was; only its call's input is replaced (a file input cleared: `inputs.when: clear`) */
  inputOnly?: boolean;
  /** the stored input's handle, when the call's input was replaced as a file input */
  inputHandle?: string;
  /**
   * the file input a clear replaced with this result (`inputs.when: clear`), measured as inputs.ts
   * measures one replaced on arrival, with a reason that names the clear: the run reports it in the
   * projection's `inputs` (../run.ts)
   */
  clearedInput?: Replacement;
  /** tokens the call's input replacement saves in the call's own item */
  inputTokensSaved?: number;
  /**
   * a clear: the call (0-based) of the session it was decided in, and the result's projected tokens
   * before it; a later call's walk (clear.ts, clear-recall.ts), which recalls the clear, counts the
   * result as it was sent until that call and the rewrite at it, as the session's ledger must
   * (../guarantee.ts)
   */
  clearedAt?: { call: number; tokens: number };
}

/** A file-writing call's input replaced by a marker (inputs.ts). */
export interface InputDecision extends Replacement {
  item: number;
  start: number;
  end: number;
  /**
   * the call (0-based) of the session the replacement is first sent in; when later than the call
   * that first sent the input, that call rewrites the cache from it and the clear stage's walk
   * charges it there (../guarantee.ts)
   */
  call: number;
}

/** The figures of a replacement as the projection reports them (a Reduction or an InputReduction). */
export function replacementFigures(d: Replacement) {
  return {
    callId: d.callId,
    tool: d.tool,
    reason: d.reason,
    originalChars: d.originalChars,
    projectedChars: d.replacement.length,
    originalTokens: d.originalTokens,
    projectedTokens: d.projectedTokens,
    handle: d.handle,
  };
}

/** A full text to keep in the store under its handle; the run writes it after the stages. */
export interface StoreWrite {
  handle: string;
  text: string;
  meta: StoredMeta;
}

/** The tokens of an image block (Anthropic `source.data`, an `image_url` data URL, with its `detail`). */
function imageBlockTokens(text: string, block: JValue): number {
  const source = get(block, 'source');
  const url = get(block, 'image_url');
  const address = url?.kind === 'string' ? decodeString(text, url) : getString(text, url, 'url');
  const data = getString(text, source, 'data') ?? (address === undefined ? undefined : dataUrlBase64(address));
  const detail = getString(text, url, 'detail') ?? getString(text, block, 'detail');
  return imageTokens(data === undefined ? undefined : imageSize(data), detail);
}

/** What the stages have decided so far in this projection (read-only to a stage). */
export interface Ledger {
  /** the decision in force for each result: recalled from the session, or made by a stage */
  readonly decisions: ReadonlyArray<Decision | undefined>;
  /** results whose marker would not have been shorter: no stage tries them again */
  readonly noGain: ReadonlyArray<boolean>;
  /** file inputs replaced, by the input's start offset in the request text */
  readonly inputs: ReadonlyMap<number, InputDecision>;
}

/** What one stage hands back to the run. */
export interface StageOutcome {
  /** the stage's decisions, in the order it made them (a later one may replace an earlier stage's) */
  decisions: Array<{ result: number; decision: Decision }>;
  /** results found not worth a marker */
  noGain: number[];
  /** the outputs its decisions need stored, in decision order */
  writes: StoreWrite[];
  /** where the session's ledger stands after this call (the clear stage's walk: ../guarantee.ts) */
  bank?: Bank;
  /**
   * per result, why the clear stage left it as it was at this call (undefined where a stage reduced
   * it): worked out only when asked (ProjectionDetail.held)
   */
  held?: () => (ClearHold | undefined)[];
}

/**
 * A copy of a short string that shares no memory with the request text. Slices of a string are
 * views of it in V8, so a tool name kept in a session would otherwise pin a whole request body.
 */
export function owned(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/** Token counts of a span of the request text, kept in session memory to skip recounting. */
export interface Span {
  start: number;
  end: number;
  tokens: number;
}

/** Token counts an earlier call of the session made, reusable where the text did not change. */
export interface CountsMemory {
  text: string;
  items: Span[];
  fixed: Span[];
  /** the references walk of that call, until a later call takes it (references.ts) */
  references?: ReferencesMemory;
  /** per result of that call: its item and the tokens of its text parts, where counted */
  parts?: PartsMemory;
}

/** Token counts of the results' text parts, kept in session memory to skip recounting. */
export interface PartsMemory {
  /** the counter that made them (a settings change keeps the session but may change the counter) */
  counter: string;
  item: number[];
  tokens: Array<number | undefined>;
}

/** The request's tool results and items, with what the stages ask of them, computed on demand. */
export class Results {
  readonly list: readonly ToolResult[];
  /** raw (escaped) length of each result's content: an upper bound of its decoded length */
  readonly rawLen: readonly number[];
  private readonly texts: Array<string | undefined>;
  private readonly parts: Array<number | undefined>;
  private itemTokens?: number[];
  private fixedSpans?: Span[];
  private fixed = 0;

  constructor(
    readonly req: ParsedRequest,
    readonly cfg: SpillwayConfig,
    readonly counter: TokenCounter,
    /** markers and agent-saved outputs found in the request before any stage (recognise.ts) */
    readonly recognised: Recognised,
    private readonly counts?: { memory: CountsMemory; samePrefix: number },
    /** Spillway's read tool as the agent names it, when the session offers it (../read-tool.ts): markers name it */
    readonly readTool?: string,
  ) {
    this.list = req.results;
    this.rawLen = req.results.map(resultRawLength);
    this.texts = new Array<string | undefined>(req.results.length);
    this.parts = new Array<number | undefined>(req.results.length);
  }

  get length(): number {
    return this.list.length;
  }

  /** The result's decoded text, as the agent sent it. */
  text(i: number): string {
    let t = this.texts[i];
    if (t === undefined) this.texts[i] = t = resultText(this.req, this.list[i]!);
    return t;
  }

  /**
   * A result no stage may reduce: already a marker, reduced by the agent itself, without text, or the
   * answer of Spillway's own read tool (../read-tool.ts: already bounded by its cap; a marker in its
   * place would send the model back to read the read, round and round), also when Codex's `exec`
   * called it from code.
   */
  fixedAsIs(i: number): boolean {
    const r = this.list[i]!;
    return (
      !!this.recognised.markers[i] ||
      this.recognised.agentSaved[i] !== undefined ||
      !r.content ||
      r.textParts.length === 0 ||
      isReadToolName(r.tool) ||
      isReadBackInCode(this.req.text, r)
    );
  }

  /**
   * Whether result i is new in this request: the session's previous call did not send it within the
   * prefix this request leaves unchanged. Without a session every result is new, so a fresh engine
   * decides again what was decided on arrival.
   */
  isNew(i: number): boolean {
    const c = this.counts;
    return !c || this.req.items[this.list[i]!.item]!.end > c.samePrefix;
  }

  /** Results a stage may still decide on, given the decisions and no-gain findings so far. */
  open(i: number, decisions: ReadonlyArray<Decision | undefined>, noGain: ReadonlyArray<boolean>): boolean {
    return !decisions[i] && !noGain[i] && !this.fixedAsIs(i);
  }

  /** Read-backs per tool in this session, when backing off (backoff.ts). */
  backoff?: { record: BackoffRecord };

  /** The references walk of this call, for the session's next call (references.ts). */
  references?: ReferencesMemory;

  /**
   * The references walk the session's previous call left, with how many leading items of this
   * request are that call's items unchanged (same place, inside the unchanged prefix). Taken: a
   * second call gets nothing, and a call that fails leaves nothing behind for the next, which then
   * walks the whole request.
   */
  takeReferences(): { memory: ReferencesMemory; sameItems: number } | undefined {
    const m = this.counts?.memory;
    const memory = m?.references;
    if (!m || !memory) return undefined;
    m.references = undefined;
    const samePrefix = this.counts!.samePrefix;
    const items = this.req.items;
    let k = 0;
    while (k < items.length && k < m.items.length) {
      const old = m.items[k]!;
      const it = items[k]!;
      if (old.start !== it.start || old.end !== it.end || it.end > samePrefix) break;
      k++;
    }
    return { memory, sameItems: k };
  }

  /** Read-backs charged to the session and the kinds stopped, under the guarantee (../guarantee.ts). */
  guarantee?: GuaranteeRecord;

  /** What the session holds ahead: set for the limit's oracle only (../types.ts, Hindsight). */
  hindsight?: Hindsight;

  /** The remaining calls the payback schedule counts on, when not the corpus's (../clear-schedule.ts, `remainingCallsTable`). */
  remaining?: readonly number[];

  private callsAt?: Uint32Array;

  /**
   * The call (0-based) in which item `item` was first sent: the model calls begun at or before it. A
   * result arrives in the call after the assistant run that asked for it; a tool call's input is
   * first sent in the call after the run that wrote it.
   */
  callOf(item: number): number {
    this.callsAt ??= callsThrough(this.req.kinds);
    return this.callsAt[item] ?? 0;
  }

  /** The model replies the request shows (runs of assistant items): its own call is numbered this. */
  replies(): number {
    return this.callOf(this.req.kinds.length - 1);
  }

  /** The cap in force for result `i`: its tool's, raised for the session's read-backs of that tool. */
  capOf(i: number): Cap {
    const cap = capFor(this.cfg, this.list[i]!.names);
    if (cap === 'unlimited' || !this.backoff) return cap;
    // only the read-backs counted by the call the result arrived in: a later one must not change what
    // an earlier call decided (or let wait) when a later call walks the session again
    const r = this.list[i]!;
    return backedOffCap(cap, readBacks(this.backoff.record, r.tool, this.callOf(r.item)));
  }

  /** Size of a result in the cap's unit when over `cap`; decodes only when the raw length could exceed it. */
  overCap(i: number, cap: Cap): number | undefined {
    if (cap === 'unlimited') return undefined;
    const rawLen = this.rawLen[i]!;
    if (this.cfg.capUnit === 'chars') {
      if (rawLen <= cap) return undefined;
      const n = this.text(i).length;
      return n > cap ? n : undefined;
    }
    // UTF-8 is at most 3 bytes per UTF-16 unit
    if (rawLen * 3 <= cap) return undefined;
    const n = Buffer.byteLength(this.text(i), 'utf8');
    return n > cap ? n : undefined;
  }

  // ---- token accounting ---------------------------------------------------------------------

  countNode(node: JValue): number {
    const text = this.req.text;
    if (node.kind === 'string') return this.counter.count(decodeString(text, node));
    if (node.kind === 'array') return node.items.reduce((a, x) => a + this.countNode(x), 0);
    if (node.kind !== 'object') return 0;
    // an image block counts as the provider bills its pixels, not as the text of its base64 (../images.ts)
    const type = getString(text, node, 'type');
    if (type !== undefined && IMAGE_TYPES.has(type)) return imageBlockTokens(text, node);
    // a thinking block counts as its readable text: signatures and encrypted content are not billed (../thinking.ts)
    if (type !== undefined && THINKING_TYPES.has(type))
      return this.counter.count(thinkingText(toValue(text, node) as Record<string, unknown>));
    return node.values.reduce((a, x) => a + this.countNode(x), 0);
  }

  /**
   * Tokens of the result's text parts as sent (what its item's count includes). A decision in
   * force carries the count it was made with, which spares a recount of a recalled result.
   */
  partsTokens(i: number, current?: Decision): number {
    let n = this.parts[i];
    if (n === undefined) {
      const r = this.list[i]!;
      n = current?.partsTokens ?? this.countedBefore(i);
      if (n === undefined) {
        if (r.observation || r.embedded) n = this.counter.count(this.text(i));
        else {
          n = 0;
          for (const p of r.textParts) n += this.counter.count(decodeString(this.req.text, p));
        }
      }
      this.parts[i] = n;
    }
    return n;
  }

  /**
   * The count the session's previous call made of result i's text parts, when the result sits in an
   * item that call sent unchanged at the same place (so that call's result i is this one).
   */
  private countedBefore(i: number): number | undefined {
    const m = this.counts?.memory;
    const n = m?.parts?.counter === this.counter.name ? m.parts.tokens[i] : undefined;
    if (n === undefined) return undefined;
    const item = this.list[i]!.item;
    const old = m!.items[item];
    const it = this.req.items[item]!;
    return m!.parts!.item[i] === item && old && old.start === it.start && old.end === it.end && it.end <= this.counts!.samePrefix
      ? n
      : undefined;
  }

  /** The counts of the results' text parts made in this call or kept from earlier ones, for the session's next call. */
  partsMemory(): PartsMemory {
    return { counter: this.counter.name, item: this.list.map((r) => r.item), tokens: [...this.parts] };
  }

  /** Tokens of the result as it stands under `current` (its marker, or its text). */
  resultTokens(i: number, current: Decision | undefined): number {
    return current ? current.projectedTokens : this.partsTokens(i);
  }

  /**
   * Tokens of each item as originally sent. In a session, items that lie in the part of the
   * request unchanged since the previous call keep their counts.
   */
  originalItemTokens(): readonly number[] {
    if (!this.itemTokens) {
      const m = this.counts?.memory;
      const samePrefix = this.counts?.samePrefix ?? 0;
      this.itemTokens = this.req.items.map((it, i) => {
        const old = m?.items[i];
        if (old && old.start === it.start && old.end === it.end && it.end <= samePrefix) return old.tokens;
        return this.countNode(it) + ITEM_OVERHEAD_TOKENS;
      });
      this.fixedSpans = this.req.fixed.map((n, i) => {
        const old = m?.fixed[i];
        const same =
          old && old.end - old.start === n.end - n.start && m!.text.slice(old.start, old.end) === this.req.text.slice(n.start, n.end);
        return { start: n.start, end: n.end, tokens: same ? old.tokens : this.countNode(n) };
      });
      this.fixed = this.fixedSpans.reduce((a, f) => a + f.tokens, 0);
    }
    return this.itemTokens;
  }

  /** Tokens of the parts sent before the items (system prompt, tool definitions). */
  fixedTokens(): number {
    this.originalItemTokens();
    return this.fixed;
  }

  /** The fixed parts' spans and counts, for the session memory. */
  fixedSpanTokens(): Span[] {
    this.originalItemTokens();
    return this.fixedSpans!;
  }

  /** Tokens of each item as projected under the ledger's decisions. */
  projectedItemTokens(ledger: Ledger): number[] {
    const tokens = [...this.originalItemTokens()];
    ledger.decisions.forEach((d, i) => {
      if (!d) return;
      tokens[this.list[i]!.item]! += this.resultTokens(i, d) - this.partsTokens(i, d);
      if (d.inputTokensSaved) {
        const call = this.list[i]!.call ?? this.req.calls.get(this.list[i]!.callId);
        if (call) tokens[call.item]! -= d.inputTokensSaved;
      }
    });
    for (const d of ledger.inputs.values()) tokens[d.item]! += d.projectedTokens - d.originalTokens;
    return tokens;
  }
}

/** A stage's working copy of the ledger: the decisions it was given, then its own, in order. */
export class Draft {
  readonly decisions: Array<Decision | undefined>;
  readonly noGain: boolean[];
  readonly outcome: StageOutcome = { decisions: [], noGain: [], writes: [] };

  constructor(
    readonly results: Results,
    readonly ledger: Ledger,
  ) {
    this.decisions = ledger.decisions.slice();
    this.noGain = ledger.noGain.slice();
  }

  open(i: number): boolean {
    return this.results.open(i, this.decisions, this.noGain);
  }

  record(i: number, decision: Decision, writes: readonly StoreWrite[]): void {
    this.decisions[i] = decision;
    this.outcome.decisions.push({ result: i, decision });
    this.outcome.writes.push(...writes);
  }

  refuse(i: number): void {
    this.noGain[i] = true;
    this.outcome.noGain.push(i);
  }
}
