/**
 * The figures the docs quote for the `npm start` demo are the demo's: the workspace is made here as
 * `npm start` makes it (test/vscode/demo.ts, the default settings) and its replay is read against
 * what docs/inspector.md and docs/vscode.md say of it (turns, counts, cost, misses). A change to the
 * default that moves the demo fails here until the pages say what the demo now shows; the README
 * quotes none of these figures and links that page.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isReference } from '../../src/engine/stages/offload';
import { makeDemoWorkspace, type DemoWorkspace } from '../vscode/demo';

const ROOT = resolve(__dirname, '../..');
const page = (name: string) => readFileSync(join(ROOT, name), 'utf8').replace(/\s+/g, ' ');

describe('the demo figures the docs quote', () => {
  let tmp: string;
  let demo: DemoWorkspace['replayed'];
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'spillway-demo-docs-'));
    demo = (await makeDemoWorkspace(join(tmp, 'demo'), ROOT)).replayed;
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const turnsOf = (pick: (d: DemoWorkspace['replayed']['decisions'][number]) => boolean) => [
    ...new Set(demo.decisions.filter(pick).map((d) => d.turn)),
  ];

  it('docs/inspector.md: the previews, the reference, the clear, the cost and the misses', () => {
    const text = page('docs/inspector.md');
    expect(text).toContain(`a real ${demo.calls}-call Claude Code`);
    const previews = turnsOf((d) => d.stage === 'offload' && !isReference(d));
    expect(previews, 'two outputs become previews on arrival').toHaveLength(2);
    expect(text).toContain(`previews with a handle (turns ${previews[0]} and ${previews[1]},`);
    const references = turnsOf((d) => isReference(d));
    expect(references).toHaveLength(1);
    expect(text).toContain(`a repeated Read in turn ${references[0]} points to the identical earlier output`);
    expect(demo.clearTurns, 'one clear').toHaveLength(1);
    const clear = demo.clearTurns[0]!;
    const inputs = demo.decisions.filter((d) => d.turn === clear && d.stage === 'input');
    expect(inputs, 'the clear replaces one file input').toHaveLength(1);
    // a file-writing call whose short result the clear sent as it was counts as its input alone (as the inspector counts it)
    const inputOnly = new Set(inputs.map((d) => d.callId));
    const cleared = demo.decisions.filter((d) => d.turn === clear && d.stage === 'clear' && !inputOnly.has(d.callId)).length;
    expect(text).toContain(`one clear replaces ${cleared} old results and a file input (turn ${clear})`);
    expect(text).toContain(`cleared in turn ${clear}`);
    const c = demo.cost['anthropic']!;
    const pct = ((1 - c.withReadBacks / c.raw) * 100).toFixed(1);
    expect(text).toContain(`for input cost −${pct}% under prompt caching and no missed identifier`);
    expect(demo.missRate).toBe(0);
    // the picture's caption: it opens on the preview that saved the most; the sizes of both previews' outputs
    expect(text).toContain(`saved the most, turn ${previews[1]}:`);
    const size = (turn: number) => {
      const d = demo.decisions.find((x) => x.turn === turn && x.stage === 'offload');
      return { tool: d?.tool, chars: /^([\d,]+) chars over/.exec(d?.reason ?? '')?.[1] };
    };
    const [first, largest] = [size(previews[0]!), size(previews[1]!)];
    expect(text).toContain(`a ${largest.chars}-character \`go test\` run`);
    expect(text).toContain(`the demo's turn ${previews[0]} makes a ${first.tool}'s ${first.chars} characters into a preview`);
  });

  it('docs/vscode.md: the markers Compare lists for a preview cleared later', () => {
    const first = turnsOf((d) => d.stage === 'offload' && !isReference(d))[0];
    expect(page('docs/vscode.md')).toContain(`\`offload, turn ${first}\` and \`clear, turn ${demo.clearTurns[0]}\``);
  });
});
