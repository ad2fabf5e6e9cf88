import { relative } from 'node:path';
import { newTokenCounter } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { readTranscript } from '../../src/replay/readers';
import { poolReplays, replay } from '../../src/replay/replay';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';
import { fixturesDir, fixtureFiles } from '../peers';
function agentOf(file: string, t: any): string {
  const parts = file.split(/[\\/]/);
  for (const a of ['claude-code', 'codex', 'mini-swe-agent', 'swe-agent', 'openhands', 'pi']) {
    if (parts.includes(a) || parts.includes(`${a}-text`)) return a;
  }
  return t.source;
}

async function main() {
  const over = JSON.parse(process.argv[2] ?? '{}');
  const only = process.argv[3];
  const dir = fixturesDir();
  const counter = newTokenCounter('o200k_base');
  const causes = new Map<string, number>();
  const results = [];
  const perAgent = new Map<string, any[]>();
  for (const { file } of fixtureFiles(dir)) {
    if (only && !file.includes(only)) continue;
    let t;
    try { t = await readTranscript(file); } catch { continue; }
    if (!t.calls.length) continue;
    const r = replay(t, { config: { preset: 'spillway', ...over }, tokenizer: counter, store: new MemoryStore(), prices: [ANTHROPIC_PRICES, OPENAI_PRICES], detail: true });
    results.push(r);
    const a = agentOf(file, t);
    perAgent.set(a, [...(perAgent.get(a) ?? []), r]);
    for (const c of r.calls) {
      for (const m of c.missed) {
        let cause = 'none';
        const red = c.reductionList?.find((x) => x.handle === m.handle);
        const inp = c.inputList?.find((x) => x.handle === m.handle) ?? c.reductionList?.find((x) => x.inputHandle === m.handle);
        if (red) cause = `${red.stage}${(red as any).afterUse ? '-afteruse' : ''}:${red.tool}`;
        else if (inp) cause = `input:${inp.tool}`;
        causes.set(cause, (causes.get(cause) ?? 0) + 1);
      }
    }
    if (process.env.PER) console.log(relative(dir, file), r.totals.calls, (r.totals.costWithReadBacks.anthropic!.relative*100).toFixed(1), (r.totals.missRate*100).toFixed(1), r.totals.missedIds);
  }
  const p = poolReplays(results);
  const f = (x: any) => `A ${(x.cost.anthropic.relative * 100).toFixed(1)} / O ${(x.cost.openai.relative * 100).toFixed(1)} | rb A ${(x.costWithReadBacks.anthropic.relative * 100).toFixed(1)} / O ${(x.costWithReadBacks.openai.relative * 100).toFixed(1)} | miss ${(x.missRate * 100).toFixed(2)}% (${x.missedIds}/${x.referencedIds})`;
  console.log('pooled', f(p));
  for (const [a, rs] of perAgent) console.log('  ', a, f(poolReplays(rs)));
  const sorted = [...causes].sort((a, b) => b[1] - a[1]);
  const byStage = new Map<string, number>();
  for (const [k, v] of sorted) byStage.set(k.split(':')[0]!, (byStage.get(k.split(':')[0]!) ?? 0) + v);
  console.log('by stage', [...byStage].map(([k, v]) => `${k} ${v}`).join(', '));
  console.log(sorted.slice(0, 25).map(([k, v]) => `${k} ${v}`).join('\n'));
}
void main();
