import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callInputSource, callSources, commandName, sourceLabel, withCallsNamed } from '../../src/engine/names';

// Commands as agents in the corpus (test/fixtures/sessions) wrote them, and the name each output goes by.
const SHAPES: [string, string][] = [
  // the demo's: a worktree `cd` before every command
  [
    'cd /Users/randlee/Documents/github/claude-history-worktrees/feature/phase10-html-quality && go test ./pkg/export/... -v',
    'go test ./pkg/export/... -v',
  ],
  ['cd /Users/badlogic/workspaces/pi-mono && gh issue view 288 --comments', 'gh issue view 288 --comments'],
  ['cd /Users/badlogic/workspaces/pi-mono && git add -A && git commit -m "fix"', 'git add -A && git commit -m "fix"'],
  ['cd /testbed; python -m pytest -x tests/test_a.py', 'python -m pytest -x tests/test_a.py'],
  ['cd "/home/u/my project" && npm test', 'npm test'],
  ['cd ~/src/app && source .venv/bin/activate && pytest -q', 'pytest -q'],
  ['cd /repo && export CI=1 && npm run build', 'npm run build'],
  ['set -e; cd /repo; make test', 'make test'],
  // environment assignments in front of the command
  [
    'RUST_LOG=debug timeout 5 ~/.local/bin/cosmic-applet-power-monitor 2>&1 | tail -50',
    'timeout 5 …/bin/cosmic-applet-power-monitor 2>&1 | tail -50',
  ],
  ['FOO=1 BAR="a b" node script.js', 'node script.js'],
  ["GOFLAGS='-count=1' go test ./...", 'go test ./...'],
  // long paths in the middle keep their last segments
  [
    '/Users/randlee/Documents/github/claude-history-worktrees/feature/phase10-html-quality/bin/claude-history list /Users/randlee/Documents/github/claude-history',
    '…/bin/claude-history list …/github/claude-history',
  ],
  ['cat /sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/name', 'cat …/intel-rapl:0/name'],
  ['go build -o=/Users/randlee/Documents/github/claude-history/bin/x ./cmd', 'go build -o=…/bin/x ./cmd'],
  // what is already short, or not setup, stays as written
  ['npm test -- --run', 'npm test -- --run'],
  ['cargo build --release 2>&1 | tail -20', 'cargo build --release 2>&1 | tail -20'],
  [
    'curl -s https://api.github.com/repos/badlogic/pi-mono/issues/288/comments',
    'curl -s https://api.github.com/repos/badlogic/pi-mono/issues/288/comments',
  ],
  ['apt-get update && apt-get install -y cron', 'apt-get update && apt-get install -y cron'],
  // an assignment that runs nothing is not a prefix to drop
  ['E1=$(cat /sys/class/power_supply/BAT0/energy_now) && sleep 1 && echo $E1', 'E1=$(cat …/BAT0/energy_now) && sleep 1 && echo $E1'],
  // a `cd` alone is what the command does
  ['cd /tmp', 'cd /tmp'],
  // a heredoc is named by its first line
  ["cat > /tmp/github_security_setup.md << 'EOF'\n# GitHub Secret Protection Setup\nEOF", "cat > /tmp/github_security_setup.md << 'EOF'"],
  ['  ls -la   src  ', 'ls -la src'],
];

describe('a command is named by what it does', () => {
  it.each(SHAPES)('%s', (command, name) => {
    expect(commandName(command)).toBe(name);
  });

  it("names the demo's Bash outputs by what they run, not by the cd most of them start with", () => {
    const demo = readFileSync(
      join(__dirname, '../fixtures/sessions/dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl'),
      'utf8',
    );
    const commands = [...demo.matchAll(/"name":"Bash","input":\{"command":"((?:[^"\\]|\\.)*)"/g)].map(
      (m) => JSON.parse(`"${m[1]}"`) as string,
    );
    expect(commands.length).toBeGreaterThan(5);
    expect(commands.filter((c) => c.startsWith('cd /Users/')).length).toBeGreaterThan(commands.length / 2);
    const labels = commands.map((c) => sourceLabel({ command: c }, 'result')!);
    expect(labels.filter((l) => l.startsWith('$ cd '))).toEqual([]);
    expect(labels.some((l) => l.startsWith('$ go test'))).toBe(true);
  });
});

describe('a result is named by its file, else its command', () => {
  it('names a command result `$ ` and what the command does, cut to 60 characters', () => {
    expect(sourceLabel({ command: 'cd /a/b/c && go test ./pkg/export/... -v' }, 'result')).toBe('$ go test ./pkg/export/... -v');
    const long = sourceLabel({ command: `cd /w && grep -rn ${'x'.repeat(80)} src` }, 'result')!;
    expect(long).toHaveLength(62);
    expect(long.endsWith('…')).toBe(true);
  });

  it('names a read by its file, a long path by its last segments', () => {
    expect(sourceLabel({ path: 'src/a.ts' }, 'result')).toBe('src/a.ts');
    expect(sourceLabel({ path: '/Users/randlee/Documents/github/claude-history-worktrees/feature/pkg/export/html.go' }, 'result')).toBe(
      '…/feature/pkg/export/html.go',
    );
  });

  it('names the output of `cd dir && cat file` by the file it prints', () => {
    expect(callInputSource({ command: 'cd /repo && cat src/main.go' })).toEqual({
      command: 'cd /repo && cat src/main.go',
      path: 'src/main.go',
    });
  });

  it('names a file input by the file it wrote, and how many more', () => {
    const source = callInputSource({ command: "cat > a.py << 'EOF'\nx\nEOF\ncat > b.py << 'EOF'\ny\nEOF" });
    expect(sourceLabel(source, 'input')).toBe('a.py +1');
  });

  it('is undefined when the call names neither a file nor a command', () => {
    expect(sourceLabel(callInputSource({ pattern: 'foo' }), 'result')).toBeUndefined();
    expect(sourceLabel({ command: '   ' }, 'result')).toBeUndefined();
  });
});

describe('a reason cites a call by what it ran, never by its id', () => {
  const request = {
    messages: [
      {
        role: 'assistant',
        tool_calls: [
          {
            id: 'toolu_01TgBC75',
            type: 'function',
            function: { name: 'Bash', arguments: JSON.stringify({ command: 'cd /w && go test ./...' }) },
          },
        ],
      },
    ],
  };

  it("names a dedupe's earlier call by its tool and command", () => {
    expect(withCallsNamed('identical to the output of call toolu_01TgBC75', callSources(request))).toBe(
      'identical to the output of Bash $ go test ./...',
    );
  });

  it('says "an earlier call" for a call the request does not name', () => {
    expect(withCallsNamed('identical to the output of call toolu_gone', callSources(request))).toBe(
      'identical to the output of an earlier call',
    );
    expect(withCallsNamed('44,000 chars over Bash’s cap of 8,000', undefined)).toBe('44,000 chars over Bash’s cap of 8,000');
  });
});

describe('a patch is named by the file it writes', () => {
  const patch = '*** Begin Patch\n*** Update File: src/script.js\n@@\n-a\n+b\n*** Add File: src/b.js\n+x\n*** End Patch';

  it('as a freeform custom tool call (Codex)', () => {
    const src = callSources({ input: [{ type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: patch }] });
    expect(sourceLabel(src.get('c1'), 'input')).toBe('src/script.js +1');
    expect(src.get('c1')!.tool).toBe('apply_patch');
  });

  it('as a JSON field', () => {
    expect(sourceLabel(callInputSource({ input: patch }), 'result')).toBe('src/script.js');
  });
});
