/**
 * `npm run bench:proxy`: runs the proxy benchmark (bench/proxy.ts) and prints what this run measured.
 *   --quick        a tenth of the calls, for a smoke run
 *   --in-process   run the proxy in the benchmark process instead of as `spillway proxy`
 *   --json FILE    also write the raw results as JSON
 */
import { writeFileSync } from 'node:fs';
import { formatProxyBench, runProxyBench } from './proxy';
import { updateBenchmarksPage } from './readme';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const jsonAt = args.indexOf('--json');
  const json = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
  const result = await runProxyBench({
    ...(quick ? { iterations: (s: number) => (s <= 10 * 1024 ? 30 : s <= 1024 * 1024 ? 10 : 3), warmup: 2 } : {}),
    ...(args.includes('--in-process') ? { proxyIn: 'in-process' as const } : {}),
    log: (l) => process.stderr.write(l + '\n'),
  });
  const table = formatProxyBench(result);
  process.stdout.write(table + '\n');
  // full runs of the default (out-of-process) mode rewrite the figures of docs/benchmarks.md
  if (!quick && !args.includes('--in-process')) {
    updateBenchmarksPage(
      'proxy',
      `Made by \`npm run bench:proxy\` on ${new Date().toISOString().slice(0, 10)} (node ${process.version}), the proxy run as \`spillway proxy\`.\n\n${table}`,
    );
  }
  if (json) writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:proxy failed: ${(e as Error).stack ?? e}\n`);
  process.exitCode = 1;
});
