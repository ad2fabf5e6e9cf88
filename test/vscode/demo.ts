/**
 * The demo workspace `npm start` opens: a small folder whose Spillway store already holds the
 * outputs of a replayed agent session, so every command has something to show on first open.
 *
 * The session is a real one from test/fixtures/transcripts/ (mini-swe-agent fixing a Django issue,
 * OpenAI Chat format) when it is there, else a small built-in one. It is replayed model call by
 * model call through the engine, with the same settings the demo workspace declares, into the store
 * folder the workspace's settings point Spillway at (`spillway.storage.folder`).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, parseConfig } from '../../src/engine/index';
import { FileStore } from '../../src/store/store';
import { PROJECTED_DIR, projectedRecords } from '../../src/extension/pure/records';
import { anthropicRequest, testLog } from './requests';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { defaultArchiveDir, SessionArchive } from '../../src/extension/inspector/archive';
import { archiveReplay } from '../../src/extension/inspector/replaySource';

const FIXTURE = 'test/fixtures/transcripts/mini-swe-agent__deepseek_bench1__django__django-14752.traj.json';
/** Marks a folder this module made, so it never deletes anything else. */
const MARK = '.spillway-demo';

/** Lower than the `spillway` preset's 8,000 so that this modest session's bigger outputs are offloaded. */
export const DEMO_SETTINGS = {
  'spillway.storage.folder': '${workspaceFolder}/.spillway/store',
  'spillway.defaultCap': 1200,
  'spillway.previewChars': 400,
  // the demo opens on the inspector; nobody else gets this
  'spillway.inspector.openOnStartup': true,
};
/** Where the demo keeps the transcript it replays (the inspector's replayed session). */
export const DEMO_TRANSCRIPT = 'session/transcript.traj.json';

export interface DemoWorkspace {
  dir: string;
  storeDir: string;
  source: string;
  projections: number;
  outputs: number;
  savedTokens: number;
  /** the replayed session the inspector opens on (null without the fixture) */
  replayed: { path: string; calls: number; originalTokens: number; projectedTokens: number } | null;
}

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** The model calls of a session: each request is the transcript up to a model call. */
function sessionRequests(root: string): { source: string; requests: object[] } {
  const file = join(root, FIXTURE);
  if (existsSync(file)) {
    const traj = JSON.parse(readFileSync(file, 'utf8')) as { messages: ChatMessage[] };
    // only what a Chat Completions request carries (the fixture adds `extra` raw responses)
    const messages = traj.messages
      .filter((m) => ['system', 'user', 'assistant', 'tool'].includes(m.role))
      .map((m) => {
        const out: ChatMessage = { role: m.role, content: m.content ?? null };
        if (m.tool_calls?.length)
          out.tool_calls = m.tool_calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.function.name, arguments: c.function.arguments },
          }));
        if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
        return out;
      });
    const requests: object[] = [];
    messages.forEach((m, i) => {
      const next = messages[i + 1];
      if (m.role === 'assistant' || (next && next.role !== 'assistant')) return;
      requests.push({ model: 'deepseek-chat', messages: messages.slice(0, i + 1) });
    });
    return { source: `${FIXTURE} (${messages.length} messages)`, requests };
  }
  return {
    source: 'the built-in demo session',
    requests: [
      anthropicRequest('bash', 'toolu_demo_tests', testLog(400, 'PASS') + 'FAIL src/store.test.ts > prune keeps the newest\n'),
      anthropicRequest('Read', 'toolu_demo_read', Array.from({ length: 300 }, (_, i) => `export const setting${i} = ${i};`).join('\n'), {
        file_path: 'src/settings.ts',
      }),
      anthropicRequest(
        'search',
        'toolu_demo_json',
        JSON.stringify({ hits: Array.from({ length: 120 }, (_, i) => ({ path: `src/file${i}.ts`, line: i * 7 })) }, null, 2),
      ),
    ],
  };
}

export async function makeDemoWorkspace(dir: string, root: string): Promise<DemoWorkspace> {
  if (existsSync(dir)) {
    if (!existsSync(join(dir, MARK))) throw new Error(`${dir} exists and is not a Spillway demo workspace; not touching it`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(join(dir, '.vscode'), { recursive: true });
  writeFileSync(join(dir, MARK), 'made by test/vscode/demo.ts; deleted and rebuilt by `npm start`\n');
  writeFileSync(join(dir, '.vscode/settings.json'), JSON.stringify(DEMO_SETTINGS, null, 2) + '\n');

  const storeDir = join(dir, '.spillway/store');
  const store = new FileStore(storeDir);
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(DEMO_SETTINGS))
    if (!k.startsWith('spillway.storage.') && !k.startsWith('spillway.inspector.')) input[k.slice('spillway.'.length)] = v;
  const config = parseConfig(input).config;
  const engine = createEngine(config, { store });
  const { source, requests } = sessionRequests(root);
  let savedTokens = 0;
  let last: { request: object; projected: unknown } | undefined;
  mkdirSync(join(storeDir, PROJECTED_DIR), { recursive: true });
  requests.forEach((request, i) => {
    const r = engine.project(request, 'auto', { session: 'demo' });
    savedTokens += r.stats.savedTokens;
    const time = new Date(Date.now() - (requests.length - i) * 60_000).toISOString();
    for (const record of projectedRecords(
      request,
      r.request,
      r.reductions.filter((x) => x.fresh),
      time,
    )) {
      writeFileSync(join(storeDir, PROJECTED_DIR, `${record.handle}.json`), JSON.stringify(record));
    }
    last = { request, projected: r.request };
  });
  mkdirSync(join(dir, 'session'), { recursive: true });
  if (last) {
    writeFileSync(join(dir, 'session/request.json'), JSON.stringify(last.request, null, 2) + '\n');
    writeFileSync(join(dir, 'session/projected.json'), JSON.stringify(last.projected, null, 2) + '\n');
  }
  // the same session replayed and kept as the inspector keeps replays, so the window opens on it at once
  let replayed: DemoWorkspace['replayed'] = null;
  if (existsSync(join(root, FIXTURE))) {
    const path = join(dir, DEMO_TRANSCRIPT);
    copyFileSync(join(root, FIXTURE), path);
    const transcript = await readTranscript(path);
    const result = replay(transcript, { config, store, detail: true });
    archiveReplay(new SessionArchive(() => defaultArchiveDir(storeDir)), path, result, statSync(path).size, config);
    replayed = {
      path,
      calls: result.totals.calls,
      originalTokens: result.totals.originalTokens,
      projectedTokens: result.totals.projectedTokens,
    };
  }
  const outputs = store.list().length;
  writeFileSync(
    join(dir, 'README.md'),
    [
      '# Spillway demo workspace',
      '',
      `This folder's Spillway store (\`.spillway/store\`, set in \`.vscode/settings.json\`) holds ${outputs} tool outputs`,
      `from a replayed agent session: ${source}, ${requests.length} model calls projected with a cap of`,
      `${DEMO_SETTINGS['spillway.defaultCap']} characters, ${savedTokens.toLocaleString('en-US')} tokens kept out of the model's context in total.`,
      '',
      '`session/request.json` is the last request the agent sent; `session/projected.json` is what Spillway sent instead.',
      '',
      'The **Spillway Inspector** opened on the replayed session (`session/transcript.traj.json`): what each turn cost under',
      'prompt caching and what Spillway saved, with the clears, the missed identifiers and the largest savings marked.',
      '',
      'Try, from the Command Palette (F1):',
      '- **Spillway: Open Stored Output…**: each output, newest first; it opens as a read-only `spillway:` document.',
      '- **Spillway: Compare Original and Projected**: the full output next to the marker the model saw.',
      "- **Spillway: Set Cap for Tool…**: change a tool's cap, for this workspace or for you.",
      '- **Spillway: Show Log**: what was reduced and why.',
      '',
    ].join('\n'),
  );
  return { dir, storeDir, source, projections: requests.length, outputs, savedTokens, replayed };
}
