/**
 * `npm run bench:held`: what the proxy pays for asking the engine why results went whole
 * (`ProjectOptions.held`, recorded per turn for the inspector). Each session's calls are projected in
 * order by a fresh engine with the option and by one without, alternated run by run on one machine
 * state, and the ratio of their times is taken pair by pair; the median and the spread are printed.
 * A few minutes on the sessions it names (three corpus sessions of three agents).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine, parseConfig } from '../src/engine';
import { readTranscript, requestForCall } from '../src/replay/readers';
import { MemoryStore } from '../src/store/memory';
import { median } from './stats';

const SESSIONS = [
  'long/claude-code/session-share__general-tool-calls.jsonl',
  'dev/mini-swe-agent/SWE-agent__deepseek-chat-django-11133.traj.json',
  'dev3/pi/badlogic__pi-session-20251217.jsonl',
];
/** Pairs per session (after one pair not counted). */
const PAIRS = 9;

async function main(): Promise<void> {
  const config = parseConfig({}).config;
  const rows: string[] = [];
  for (const name of SESSIONS) {
    const t = await readTranscript(join(process.cwd(), 'test/fixtures/sessions', name));
    const bodies = t.calls.map((_, k) => JSON.stringify(requestForCall(t, k)));
    const run = (held: boolean) => {
      const engine = createEngine(config, { store: new MemoryStore() });
      const started = performance.now();
      for (const b of bodies) engine.project(b, t.wire, { session: 's', ...(held ? { held: true } : {}) });
      return performance.now() - started;
    };
    run(true);
    run(false);
    const ratios: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      // the order within a pair alternates, so neither side always runs on a warmer machine
      let withHeld: number;
      let without: number;
      if (i % 2) {
        withHeld = run(true);
        without = run(false);
      } else {
        without = run(false);
        withHeld = run(true);
      }
      ratios.push(withHeld / without);
    }
    const f = (x: number) => x.toFixed(3);
    rows.push(`| ${name} | ${t.calls.length} | ${f(median(ratios))} | ${f(Math.min(...ratios))} | ${f(Math.max(...ratios))} |`);
  }
  process.stdout.write(
    [
      `Made by \`npm run bench:held\` (node ${process.version}): engine time with \`held\` over without, each session's calls in order, ${PAIRS} alternated pairs.`,
      '',
      '| session | calls | median | min | max |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:held failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
