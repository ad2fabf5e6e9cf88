/**
 * The demo workspace `npm start` opens: a small folder whose Spillway store already holds the
 * outputs of a replayed agent session, so every command has something to show on first open.
 *
 * The session is a real one from the repository's corpus (test/fixtures/sessions/dev3/claude-code/:
 * a Claude Code sub-agent session of 64 model calls on claude-sonnet-4-5 that reads, greps and edits
 * a Go project; MIT, source in that folder's README), so a fresh clone needs nothing else. It was
 * chosen, by replaying the corpus under the default settings, because the default reduces it
 * visibly: tool outputs become previews with a handle, and a later clear replaces old results (and
 * a file input) by markers, with input cost well down and no missed identifier. It is replayed model
 * call by model call through the engine under the DEFAULT settings (the `spillway` preset; the demo
 * workspace sets no cap), into the store folder the workspace's settings point Spillway at
 * (`spillway.storage.folder`), and kept as the inspector keeps replays, so the window opens on the
 * default's real figures at once. Tests find the turns they show from `replayed`, never by number.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseConfig } from '../../src/engine/index';
import { FileStore } from '../../src/store/store';
import { mergeRecords, PROJECTED_DIR, projectedRecords, withInputStage, type ProjectedRecord } from '../../src/extension/pure/records';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { defaultArchiveDir, SessionArchive } from '../../src/extension/inspector/archive';
import { archiveReplay, collectMarkers } from '../../src/extension/inspector/replaySource';
import { formatInt } from '../../src/engine/format-number';

/** The session the demo replays (in the corpus, with its source and license in test/fixtures/sessions/dev3/README.md). */
export const DEMO_FIXTURE = 'test/fixtures/sessions/dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl';
/** Marks a folder this module made, so it never deletes anything else. */
const MARK = '.spillway-demo';

/** No cap, no preview size: the demo shows what the default does. */
export const DEMO_SETTINGS = {
  'spillway.storage.folder': '${workspaceFolder}/.spillway/store',
  // the demo opens on the inspector; nobody else gets this
  'spillway.inspector.openOnStartup': true,
  // the demo folder sits inside the Spillway clone: git's "repository found in parent folders" offer
  // covered the inspector's turn details on every load
  'git.openRepositoryInParentFolders': 'never',
};
/** Where the demo keeps the transcript it replays (the inspector's replayed session), under its own name. */
export const DEMO_TRANSCRIPT = `session/${basename(DEMO_FIXTURE)}`;

export interface DemoWorkspace {
  dir: string;
  storeDir: string;
  source: string;
  projections: number;
  outputs: number;
  savedTokens: number;
  /** the replayed session the inspector opens on */
  replayed: {
    path: string;
    calls: number;
    originalTokens: number;
    projectedTokens: number;
    missRate: number;
    /** input cost under caching per price model, raw history and projection (both with caching), and the projection with read-backs (the headline) */
    cost: Record<string, { raw: number; projected: number; withReadBacks: number }>;
    /** the model the session's agent called */
    model: string | undefined;
    /** the turns (1-based) where a clear fired, where an output became a preview with a handle, and where the agent named something the projection hid */
    clearTurns: number[];
    previewTurns: number[];
    missedTurns: number[];
    /** every decision the replay made, turn by turn: tests find the turns they show by what happened there */
    decisions: DemoDecision[];
  };
}

/**
 * A session with a file written through a shell heredoc (sync_raw_logs.py), for the tests of how a
 * file input replaced by a marker is shown (named by its file, opened as the command's text, "input"
 * in the pickers). Under the default a file input is replaced only by a clear, and a turn's details in
 * the inspector list only inputs replaced on arrival, so those tests ask for `INPUTS_ON_ARRIVAL`: a non-default mechanism,
 * on a session that has it, not the demo as users see it. (Measured: with inputs on arrival alone,
 * reads kept whole while in use, this session replaces only a Write; its heredocs need reads offloaded
 * on arrival too.)
 */
export const INPUTS_FIXTURE = 'test/fixtures/sessions/dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl';
export const INPUTS_ON_ARRIVAL = { 'spillway.offload.keepReads': 0, 'spillway.inputs.when': 'arrival' } as const;

/**
 * The engine's settings among a workspace's (`spillway.*` less the extension's own storage and
 * inspector keys), as `parseConfig` takes them: what the window projects and replays under.
 */
export function engineSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...DEMO_SETTINGS, ...settings }))
    if (k.startsWith('spillway.') && !k.startsWith('spillway.storage.') && !k.startsWith('spillway.inspector.'))
      input[k.slice('spillway.'.length)] = v;
  return input;
}

/** One decision a turn of the replay made: a stage on a result, or `input` on a call's file input. */
export interface DemoDecision {
  /** 1-based */
  turn: number;
  stage: string;
  callId: string;
  tool: string;
  /** the engine's sentence for it ("10,040 chars over Bash's cap of 8,000") */
  reason: string;
}

/**
 * Makes the demo workspace in `dir`. `settings` (`spillway.*` keys) are written to the workspace's
 * settings beside the demo's own and the replay runs under them, so the window and the store agree;
 * `npm start` passes none (the default). `session` is the corpus file replayed (the demo's unless a
 * test of another mechanism needs another: `INPUTS_FIXTURE`).
 */
export async function makeDemoWorkspace(
  dir: string,
  root: string,
  settings: Record<string, unknown> = {},
  session: string = DEMO_FIXTURE,
): Promise<DemoWorkspace> {
  const fixture = join(root, session);
  if (!existsSync(fixture)) throw new Error(`the demo session ${fixture} is missing`);
  if (existsSync(dir)) {
    if (!existsSync(join(dir, MARK))) throw new Error(`${dir} exists and is not a Spillway demo workspace; not touching it`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(join(dir, '.vscode'), { recursive: true });
  writeFileSync(join(dir, MARK), 'made by test/vscode/demo.ts; deleted and rebuilt by `npm start`\n');
  const workspaceSettings: Record<string, unknown> = { ...DEMO_SETTINGS, ...settings };
  writeFileSync(join(dir, '.vscode/settings.json'), JSON.stringify(workspaceSettings, null, 2) + '\n');

  const storeDir = join(dir, '.spillway/store');
  const store = new FileStore(storeDir);
  const config = parseConfig(engineSettings(workspaceSettings)).config;

  mkdirSync(join(dir, 'session'), { recursive: true });
  const path = join(dir, 'session', basename(session));
  copyFileSync(fixture, path);
  const transcript = await readTranscript(path);
  // one replay fills the store, records what each reduction sent (for Compare and the documents), and is kept for the inspector
  let savedTokens = 0;
  const records: ProjectedRecord[][] = [];
  const clearTurns: number[] = [];
  const previewTurns: number[] = [];
  const decisions: DemoDecision[] = [];
  let last: { request: unknown; projected: unknown } | undefined;
  // the markers each turn sent, kept with the replay (the inspector shows each turn's own)
  const marks = collectMarkers((i, { request, projection }) => {
    const original = JSON.parse(request) as unknown;
    const projected = JSON.parse(projection.request) as unknown;
    savedTokens += projection.stats.savedTokens;
    if (projection.reductions.some((x) => x.fresh && x.stage === 'clear')) clearTurns.push(i + 1);
    if (projection.reductions.some((x) => x.fresh && x.stage !== 'clear')) previewTurns.push(i + 1);
    for (const x of projection.reductions)
      if (x.fresh) decisions.push({ turn: i + 1, stage: x.stage, callId: x.callId, tool: x.tool, reason: x.reason });
    for (const x of projection.inputs)
      if (x.fresh) decisions.push({ turn: i + 1, stage: 'input', callId: x.callId, tool: x.tool, reason: x.reason });
    records[i] = projectedRecords(
      original,
      projected,
      // file inputs are stored outputs too (replaced on arrival, or by a clear with their call's
      // result): each gets its record, so every stored output is listed
      [...projection.reductions, ...withInputStage(projection.inputs)],
      '',
      { turn: i },
      (x) => x.fresh === true,
    );
    last = { request: original, projected };
  });
  const result = replay(transcript, { config, store, detail: true, onProjection: marks.onProjection });
  const calls = result.totals.calls;
  mkdirSync(join(storeDir, PROJECTED_DIR), { recursive: true });
  // one record per output, with every marker it was sent as (an output offloaded in turn 11 and cleared in 22 has two)
  const byHandle = new Map<string, ProjectedRecord>();
  records.forEach((list, i) => {
    const time = new Date(Date.now() - (calls - i) * 60_000).toISOString();
    for (const record of list)
      byHandle.set(
        record.handle,
        mergeRecords(byHandle.get(record.handle), { ...record, time, markers: record.markers.map((m) => ({ ...m, time })) }),
      );
  });
  for (const record of byHandle.values()) writeFileSync(join(storeDir, PROJECTED_DIR, `${record.handle}.json`), JSON.stringify(record));
  if (last) {
    writeFileSync(join(dir, 'session/request.json'), JSON.stringify(last.request, null, 2) + '\n');
    writeFileSync(join(dir, 'session/projected.json'), JSON.stringify(last.projected, null, 2) + '\n');
  }
  const model = typeof transcript.base['model'] === 'string' ? transcript.base['model'] : undefined;
  archiveReplay(new SessionArchive(() => defaultArchiveDir(storeDir)), path, result, statSync(path).size, config, model, marks.markers);
  const cost: DemoWorkspace['replayed']['cost'] = {};
  for (const [priceModel, c] of Object.entries(result.totals.cost))
    cost[priceModel] = {
      raw: c.raw,
      projected: c.projected,
      withReadBacks: result.totals.costWithReadBacks[priceModel]?.projected ?? c.projected,
    };
  const replayed: DemoWorkspace['replayed'] = {
    path,
    calls,
    originalTokens: result.totals.originalTokens,
    projectedTokens: result.totals.projectedTokens,
    missRate: result.totals.missRate,
    cost,
    model,
    clearTurns,
    previewTurns,
    missedTurns: result.calls.filter((c) => c.missedIds > 0).map((c) => c.index + 1),
    decisions,
  };
  const pct = (model: string) => {
    const c = cost[model];
    const v = c && c.raw > 0 ? ((c.withReadBacks - c.raw) / c.raw) * 100 : 0;
    return `${v > 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}%`;
  };
  const outputs = store.list().length;
  const source = `${basename(session)} (a real Claude Code session)`;
  writeFileSync(
    join(dir, 'README.md'),
    [
      '# Spillway demo workspace',
      '',
      `This folder's Spillway store (\`.spillway/store\`, set in \`.vscode/settings.json\`) holds ${outputs} tool outputs`,
      `from a replayed agent session: ${source}, ${calls} model calls projected under the default settings,`,
      `${formatInt(savedTokens)} tokens kept out of the model's context in total: input cost under prompt caching, with the`,
      `read-backs its misses would cost, ${pct('anthropic')} (Anthropic prices) and ${pct('openai')} (OpenAI), miss rate ${(result.totals.missRate * 100).toFixed(1)}%.`,
      '',
      '`session/request.json` is the last request the agent sent; `session/projected.json` is what Spillway sent instead.',
      '',
      `The **Spillway Inspector** opened on the replayed session (\`session/${basename(session)}\`), on a turn where tool`,
      'outputs became previews with a handle: what each turn cost in dollars under prompt caching and why, with the clears, the',
      'missed identifiers and the largest savings marked.',
      '',
      'Try, from the Command Palette (F1):',
      '- **Spillway: Open Stored Output…**: each output, newest first; it opens as a read-only `spillway:` document.',
      '- **Spillway: Compare Original and Projected**: the full output next to the marker the model saw.',
      "- **Spillway: Set Cap for Tool…**: change a tool's cap, for this workspace or for you.",
      '- **Spillway: Show Log**: what was reduced and why.',
      '',
    ].join('\n'),
  );
  return { dir, storeDir, source, projections: calls, outputs, savedTokens, replayed };
}
