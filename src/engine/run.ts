/**
 * One projection, as DESIGN.md's pipeline: on a request read into the item model (formats/, by
 * engine.ts, which reuses the session's parse), recognise, recall, the four stages in order, then
 * apply their decisions.
 *
 * Why this module exists: it is the only place that changes state. Each stage (stages/*.ts) is a
 * function of the request's results, the ledger of decisions so far and the configuration, and
 * returns its decisions; the run applies them to the ledger between stages (a later stage only sees
 * what earlier ones left), collects the store writes they need, and at the end turns the ledger into
 * patches of the original text, the reductions list and the stats. The engine (engine.ts) writes the
 * collected outputs to the store after every stage has decided, then patches the request.
 *
 * The chain, in order:
 *   recognise (stages/recognise.ts)  markers and agent-saved outputs already in the request: left alone
 *   recall    (session.ts)           decisions an earlier call of the session made: kept (stickiness)
 *   inputs    (stages/inputs.ts)     file-writing calls' inputs, in offload's slot
 *   offload   (stages/offload.ts)    over the cap: stored, marker with preview; custom reducers; dedupe
 *   window    (stages/window.ts)     long results in old turns: preview
 *   budget    (stages/budget.ts)     every result but the newest held to its cap
 *   clear     (stages/clear.ts)      over the trigger: oldest results cleared (stale first: stages/stale.ts)
 * Each reduction's marker and store write are made by stages/reduce.ts.
 */
import type { SpillwayConfig } from './config';
import { contentPatch, type ParsedRequest } from './formats';
import { handlesIn, noteReadBack, type BackoffRecord } from './backoff';
import { providerOfModel, routePrices } from './clear-schedule';
import { getString, type Patch } from './json';
import { copyGuarantee, guaranteed, readCallTokens, stopsAt, type GuaranteeRecord } from './guarantee';
import { handleOrigin, recall, remember, resultKeys, type SessionMemory } from './session';
import { findReadTool } from './read-tool';
import { recogniseAgentTruncation } from './agent-truncation';
import { budget } from './stages/budget';
import { clear } from './stages/clear';
import { fileInputs } from './stages/inputs';
import { offload, whyWhole } from './stages/offload';
import { recognise } from './stages/recognise';
import {
  replacementFigures,
  Results,
  type Decision,
  type InputDecision,
  type Ledger,
  type StageOutcome,
  type StoreWrite,
} from './stages/results';
import { window } from './stages/window';
import type { TokenCounter } from './tokens';
import {
  STAGE_ORDER,
  type CustomReducer,
  type Hindsight,
  type InputFilter,
  type InputReduction,
  type ClearHold,
  type HeldGroup,
  type KeptWhole,
  type ProjectionStats,
  type Reduction,
  type SavedByAgent,
  type StageName,
  type TruncatedByAgent,
} from './types';

/** Token counts per item, original and projected, and of the parts sent before the items. */
export interface ProjectionDetail {
  fixedTokens: number;
  originalItemTokens: number[];
  projectedItemTokens: number[];
  /** results new in this call (after the session's previous request) over their tool's cap and sent whole, and why (offload.ts `whyWhole`) */
  keptWhole: KeptWhole[];
  /**
   * per tool result (its index, as `Reduction.result`), why the clear stage left it as it was in this
   * call; undefined where a stage reduced it. Only with the `held` option; absent when the clear stage is off.
   */
  held?: (ClearHold | undefined)[];
}

/** What a run needs from its engine. */
export interface RunEnv {
  cfg: SpillwayConfig;
  counter: TokenCounter;
  reducers: Record<string, CustomReducer>;
  /** which file inputs the configuration would replace are replaced (EngineOptions.inputFilter) */
  inputFilter?: InputFilter;
  /** what the session holds ahead (EngineOptions.hindsight) */
  hindsight?: Hindsight;
  /** the remaining calls the payback schedule counts on, learned from EngineOptions.sessionLengths (clear-schedule.ts) */
  remaining?: readonly number[];
  /** when this call is sent (ProjectOptions.at) */
  at?: number;
  /** the provider it goes to (ProjectOptions.provider) */
  provider?: string;
  /** whether a handle is stored or was issued by this engine (a marker's handle must be) */
  known: (handle: string) => boolean;
}

export class Run implements Ledger {
  readonly results: Results;
  readonly decisions: Array<Decision | undefined>;
  /** true where this call made the decision, false where it was recalled from an earlier call */
  readonly fresh: boolean[];
  readonly noGain: boolean[];
  readonly inputs = new Map<number, InputDecision>();
  /** outputs the decisions need stored, in the order decided; the engine writes them */
  readonly writes: StoreWrite[] = [];
  private readonly keys: string[];
  /** the clear stage's reasons for what it left as it was (ProjectionDetail.held), worked out when first asked */
  private held?: () => (ClearHold | undefined)[];
  private heldMemo?: (ClearHold | undefined)[];

  constructor(
    readonly req: ParsedRequest,
    private readonly env: RunEnv,
    private readonly memory?: SessionMemory,
    private readonly samePrefix = 0,
  ) {
    const recognised = recognise(req, env.cfg, env.known);
    // once a session has offered the read tool, its markers keep naming it (read-tool.ts)
    // (a session's earlier request found none: only what changed since is looked through)
    const readTool = memory?.readTool ?? findReadTool(req, memory ? samePrefix : 0);
    this.results = new Results(req, env.cfg, env.counter, recognised, memory ? { memory, samePrefix } : undefined, readTool);
    if (env.hindsight) this.results.hindsight = env.hindsight;
    if (env.remaining) this.results.remaining = env.remaining;
    this.keys = resultKeys(req.results);
    const n = req.results.length;
    this.decisions = memory
      ? recall(req, this.keys, recognised.markers, memory, samePrefix)
      : new Array<Decision | undefined>(n).fill(undefined);
    this.fresh = new Array<boolean>(n).fill(false);
    this.noGain = new Array<boolean>(n).fill(false);
    this.call = this.results.replies();
    this.backoff = new Map([...(memory?.backoff ?? [])].map(([tool, calls]) => [tool, [...calls]]));
    this.readBack = new Set(memory?.readBack);
    this.guarantee = copyGuarantee(memory?.guarantee);
    if (env.at !== undefined) (this.guarantee.at ??= [])[this.call] = env.at;
    // the provider the session's requests go to: told by the host, else read from the request's model
    this.guarantee.route ??= env.provider ?? providerOfModel(getString(req.text, req.root, 'model'));
    const guarded = guaranteed(env.cfg);
    if (memory && (env.cfg.offload.backoff || guarded)) this.findReadBacks(memory);
    if (env.cfg.offload.backoff) this.results.backoff = { record: this.backoff };
    if (guarded) {
      // a new call of the session: the kinds the bank can no longer cover stop from here on, and those
      // it covers again go on (a request projected again, or an earlier one, keeps the stops it had:
      // only a new call changes any)
      if (!memory || memory.call < this.call)
        for (const kind of stopsAt(this.guarantee, this.call, routePrices(this.guarantee.route)))
          (this.guarantee.stops[kind] ??= []).push(this.call);
      this.results.guarantee = this.guarantee;
    }
  }

  /** This call's place in the session: the model calls the request shows before it. */
  readonly call: number;
  /** read-backs per tool so far in the session, this request's included (backoff.ts) */
  readonly backoff: BackoffRecord;
  private readonly readBack: Set<string>;
  /** read-backs charged, stops and the bank (guarantee.ts) */
  private readonly guarantee: GuaranteeRecord;

  /**
   * Read-backs in the items new since the previous call: an assistant item that names a handle
   * this session issued (a read tool's input, `spillway read`, a read of the store file). Each of an
   * output offloaded on arrival backs its tool off (backoff.ts); each is charged to the session's
   * ledger at this call (guarantee.ts).
   */
  private findReadBacks(memory: SessionMemory): void {
    const req = this.req;
    req.items.forEach((it, i) => {
      if (req.kinds[i] !== 'assistant' || it.end <= this.samePrefix) return;
      for (const handle of handlesIn(req.text.slice(it.start, it.end))) {
        if (this.readBack.has(handle)) continue;
        const origin = handleOrigin(memory, handle);
        if (origin === undefined) continue;
        this.readBack.add(handle);
        // (an output offloaded on arrival raises its tool's cap for results arriving from the call the
        // read was made in: results.ts, `capOf`)
        if (this.env.cfg.offload.backoff) noteReadBack(this.backoff, origin.tool, this.results.callOf(i), origin.kind);
        if (guaranteed(this.env.cfg))
          this.guarantee.readBacks.push({
            call: this.call,
            kind: origin.kind,
            ask: readCallTokens(this.env.counter),
            answer: origin.answer,
          });
      }
    });
  }

  /** Results that looked like markers but were not (too long, or an unknown handle): treated as text. */
  get forged(): number {
    return this.results.recognised.forged;
  }

  /** Runs the stages in DESIGN.md's order, each on what the earlier ones left. */
  stages(): void {
    const c = this.env.cfg;
    const results = this.results;
    for (const stage of STAGE_ORDER) {
      if (stage === 'offload' && c.inputs.enabled) {
        const out = fileInputs(results, this.env.inputFilter);
        for (const d of out.inputs) this.inputs.set(d.start, d);
        this.writes.push(...out.writes);
      }
      if (stage === 'offload' && (c.offload.enabled || Object.keys(this.env.reducers).length))
        this.apply(offload(results, this, this.env.reducers));
      if (stage === 'window' && c.window.enabled) this.apply(window(results, this));
      if (stage === 'budget' && c.budget.enabled) this.apply(budget(results, this));
      if (stage === 'clear' && c.clear.enabled) {
        const out = clear(results, this);
        this.apply(out);
        if (out.bank) this.guarantee.bank = out.bank;
        this.held = out.held;
      }
    }
  }

  private apply(outcome: StageOutcome): void {
    for (const { result, decision } of outcome.decisions) {
      this.decisions[result] = decision;
      this.fresh[result] = true;
    }
    for (const i of outcome.noGain) this.noGain[i] = true;
    this.writes.push(...outcome.writes);
  }

  /** The ledger as edits of the original text, and as the reductions callers see. */
  finish(): { patches: Patch[]; reductions: Reduction[]; inputs: InputReduction[] } {
    const req = this.req;
    const patches: Patch[] = [];
    const reductions: Reduction[] = [];
    const inputs: InputReduction[] = [];
    const inputsDone = new Set<number>();
    for (const d of this.inputs.values()) {
      inputsDone.add(d.start);
      patches.push({ start: d.start, end: d.end, text: d.replacement });
      inputs.push({
        ...replacementFigures(d),
        item: d.item,
        by: 'arrival',
        // decided in an earlier call when the previous request already carried this call
        fresh: !(this.memory && d.end <= this.samePrefix),
      });
    }
    this.decisions.forEach((d, i) => {
      if (!d) return;
      const r = req.results[i]!;
      if (!d.inputOnly) patches.push(contentPatch(req, r, d.replacement));
      const call = r.call ?? req.calls.get(r.callId);
      if (d.inputReplacement && call?.input && !inputsDone.has(call.input.start)) {
        inputsDone.add(call.input.start);
        patches.push({ start: call.input.start, end: call.input.end, text: d.inputReplacement });
        // a file input the clear replaced with this result: listed with those replaced on arrival,
        // fresh in the call that made the clear (`clear.clearToolInputs` keeps only `inputCleared`)
        if (d.clearedInput) inputs.push({ ...replacementFigures(d.clearedInput), item: call.item, by: 'clear', fresh: this.fresh[i]! });
      }
      reductions.push({
        result: r.n,
        ...replacementFigures(d),
        stage: d.stage,
        fresh: this.fresh[i]!,
        ...(d.inputReplacement ? { inputCleared: true } : {}),
        ...(d.inputHandle ? { inputHandle: d.inputHandle } : {}),
        ...(d.inputOnly ? { inputOnly: true } : {}),
      });
    });
    return { patches, reductions, inputs };
  }

  /** What this call leaves for the next one of its session. */
  remember(): SessionMemory {
    return remember(this.results, this.keys, this.decisions, {
      call: this.call,
      backoff: this.backoff,
      readBack: this.readBack,
      guarantee: this.guarantee,
      inputs: [...this.inputs.values()].map(({ handle, tool, originalTokens, originalChars }) => ({
        handle,
        tool,
        originalTokens,
        originalChars,
      })),
    });
  }

  /** The call's token counts; with `held`, also the clear stage's reason per result (worked out only when asked). */
  detail(held: boolean): ProjectionDetail {
    const reasons = held ? this.heldReasons() : undefined;
    return {
      fixedTokens: this.results.fixedTokens(),
      originalItemTokens: [...this.results.originalItemTokens()],
      projectedItemTokens: this.results.projectedItemTokens(this),
      keptWhole: this.keptWhole(),
      ...(reasons ? { held: reasons } : {}),
    };
  }

  /** The clear stage's reason per result, worked out once whether `detail` or `heldGroups` asks first; undefined when it did not run. */
  private heldReasons(): (ClearHold | undefined)[] | undefined {
    if (!this.held) return undefined;
    return (this.heldMemo ??= this.held());
  }

  /**
   * The results this call sends whole, grouped by why the clear stage left them so, with the tokens
   * each group sends, the group sending the most first (ties by reason, so the order is stable).
   * Undefined when the clear stage did not run.
   */
  heldGroups(): HeldGroup[] | undefined {
    const reasons = this.heldReasons();
    if (!reasons) return undefined;
    const groups = new Map<ClearHold, HeldGroup>();
    reasons.forEach((reason, i) => {
      if (!reason) return;
      let g = groups.get(reason);
      if (!g) groups.set(reason, (g = { reason, results: 0, tokens: 0 }));
      g.results++;
      g.tokens += this.results.partsTokens(i);
    });
    return [...groups.values()].sort((a, b) => b.tokens - a.tokens || a.reason.localeCompare(b.reason));
  }

  /**
   * The results new in this call that are over their tool's cap and that no stage reduced, each with
   * the reason it stayed whole (a result the previous call of the session carried was told there).
   */
  private keptWhole(): KeptWhole[] {
    const results = this.results;
    const out: KeptWhole[] = [];
    for (let i = 0; i < results.length; i++) {
      if (this.memory && this.req.items[results.list[i]!.item]!.end <= this.samePrefix) continue;
      if (this.decisions[i] || results.recognised.markers[i] !== undefined || results.recognised.agentSaved[i] !== undefined) continue;
      const why = whyWhole(results, i, this.noGain[i]!);
      const r = results.list[i]!;
      if (why) out.push({ result: i, callId: r.callId, tool: r.tool, ...why });
    }
    return out;
  }

  stats(out: string): ProjectionStats {
    const results = this.results;
    const fixed = results.fixedTokens();
    const original = results.originalItemTokens().reduce((a, b) => a + b, 0) + fixed;
    const projected = results.projectedItemTokens(this).reduce((a, b) => a + b, 0) + fixed;
    const byStage: Record<StageName, number> = { offload: 0, window: 0, budget: 0, clear: 0 };
    let reduced = 0;
    for (const d of this.decisions)
      if (d) {
        byStage[d.stage]++;
        reduced++;
      }
    const saved = this.savedByAgent();
    const truncated = this.truncatedByAgent();
    return {
      format: this.req.format,
      toolResults: results.length,
      reducedResults: reduced,
      originalTokens: original,
      projectedTokens: projected,
      savedTokens: original - projected,
      originalChars: this.req.text.length,
      projectedChars: out.length,
      byStage,
      markersSeen: results.recognised.markersSeen,
      ...(saved.length ? { savedByAgent: saved } : {}),
      ...(truncated.length ? { truncatedByAgent: truncated } : {}),
      unchanged: out === this.req.text,
    };
  }

  private savedByAgent(): SavedByAgent[] {
    const out: SavedByAgent[] = [];
    const results = this.results;
    results.recognised.agentSaved.forEach((saved, i) => {
      if (saved === undefined) return;
      const r = results.list[i]!;
      out.push({ result: i, callId: r.callId, tool: r.tool, agent: saved.agent, file: saved.file, chars: results.text(i).length });
    });
    return out;
  }

  /** The results new in this request (after the latest reply) that the agent had truncated itself. */
  private truncatedByAgent(): TruncatedByAgent[] {
    const out: TruncatedByAgent[] = [];
    const results = this.results;
    const latest = results.replies();
    for (let i = results.length - 1; i >= 0; i--) {
      const r = results.list[i]!;
      if (results.callOf(r.item) !== latest) break;
      if (results.recognised.markers[i] !== undefined || results.recognised.agentSaved[i] !== undefined) continue;
      const cut = recogniseAgentTruncation(results.text(i));
      if (cut) out.unshift({ result: i, callId: r.callId, tool: r.tool, ...cut });
    }
    return out;
  }
}
