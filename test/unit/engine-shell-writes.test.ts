/**
 * Files written through the shell (src/engine/file-inputs.ts, `heredocWrites` / `shellWriteMarker`,
 * run by the inputs stage): a shell call whose command feeds a heredoc to `cat > file` or `tee file`
 * has each such body replaced by one line naming the file and the handle of the whole input; the
 * rest of the command stays byte for byte, the input reads back exactly, and commands whose heredoc
 * is not a file's content (a script piped to python, output redirected) are left alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { heredocWrites, shellWriteMarker } from '../../src/engine/file-inputs';
import { perChar } from '../support/run';

const body = (tag: string, lines = 30) => Array.from({ length: lines }, (_, i) => `def ${tag}_${i}(x):\n    return x * ${i}`).join('\n');

describe('heredocWrites: which heredocs write a file', () => {
  it.each([
    [`cat > fix.py << 'EOF'\n${body('a')}\nEOF`, 'fix.py'],
    [`cd /testbed && cat > /tmp/t.py <<EOF\n${body('a')}\nEOF\npython /tmp/t.py`, '/tmp/t.py'],
    [`cat <<"PY" > "out dir.txt"\n${body('a')}\nPY`, undefined],
    [`cat << 'EOF' >> notes.md\n${body('a')}\nEOF`, 'notes.md'],
    [`cat <<-EOF > indented.sh\n${body('a')}\n\t\tEOF`, 'indented.sh'],
    [`tee -a log.txt << 'EOF'\n${body('a')}\nEOF`, 'log.txt'],
    [`cat << 'EOF' | tee conf.yaml\n${body('a')}\nEOF`, 'conf.yaml'],
  ])('finds the file of %#', (command, path) => {
    const found = heredocWrites(command);
    if (path === undefined) {
      // a quoted path with a space is not one we can name: left alone rather than misnamed
      expect(found.map((w) => w.path)).not.toContain('out dir.txt');
      return;
    }
    expect(found.map((w) => w.path)).toEqual([path]);
    const w = found[0]!;
    expect(command.slice(w.start, w.end)).toContain(body('a').split('\n')[0]);
    // the body is exactly the lines between the operator's line and the delimiter's
    expect(command.slice(w.start, w.end).endsWith('\n')).toBe(true);
  });

  it.each([
    ['python3 - << EOF', 'a script run by python is not on disk'],
    ['python3 - > out.txt << EOF', "the redirect takes python's output, not the body"],
    ['cat << EOF', 'printed, not written'],
    ['cat > /dev/null << EOF', 'thrown away'],
    ['git commit -F - << EOF', 'read by another program'],
  ])('leaves `%s` alone: %s', (line) => {
    expect(heredocWrites(`${line}\n${body('a')}\nEOF\n`)).toEqual([]);
  });

  it('leaves an unterminated heredoc alone (the shell reads it to the end)', () => {
    expect(heredocWrites(`cat > f.py << EOF\n${body('a')}`)).toEqual([]);
  });

  it('finds every heredoc of a command, in order, and skips those that are not writes', () => {
    const cmd = `cat > a.py << 'EOF'\n${body('a')}\nEOF\npython - << 'EOF'\n${body('b')}\nEOF\ncat > c.py <<EOF\n${body('c')}\nEOF\n`;
    expect(heredocWrites(cmd).map((w) => w.path)).toEqual(['a.py', 'c.py']);
  });

  it('ends a body at the first line that is the delimiter, not at a line that contains it', () => {
    const cmd = `cat > a.sh << 'EOF'\necho EOF here\nEOF_NOT\nEOF\necho after`;
    const [w] = heredocWrites(cmd);
    expect(cmd.slice(w!.start, w!.end)).toBe('echo EOF here\nEOF_NOT\n');
  });
});

describe('shellWriteMarker: what replaces the bodies', () => {
  it('keeps the command around the body and names the file, its size and the handle', () => {
    const command = `cd /testbed && cat > implement_fix.py << 'EOF'\n${body('fix')}\nEOF\npython implement_fix.py`;
    const out = shellWriteMarker({ command, timeout: 30 }, 'sw_0123456789abcdef01234567');
    expect(out).toBeDefined();
    const next = (out!.value as { command: string }).command;
    expect((out!.value as { timeout: number }).timeout).toBe(30);
    expect(next.startsWith(`cd /testbed && cat > implement_fix.py << 'EOF'\n[spillway: `)).toBe(true);
    expect(next.endsWith('\nEOF\npython implement_fix.py')).toBe(true);
    expect(next).toContain('written to implement_fix.py');
    expect(next).toContain('spillway read sw_0123456789abcdef01234567');
    expect(next.split('\n')).toHaveLength(4);
    expect(out!.paths).toEqual(['implement_fix.py']);
    expect(out!.chars).toBe(body('fix').length + 1);
  });

  it('replaces inside Codex\'s ["bash", "-lc", script] arrays and exec_command\'s cmd', () => {
    const script = `cat > a.py << 'EOF'\n${body('a')}\nEOF`;
    const arr = shellWriteMarker({ command: ['bash', '-lc', script], workdir: '/w' }, 'sw_x');
    expect((arr!.value as { command: string[] }).command.slice(0, 2)).toEqual(['bash', '-lc']);
    expect((arr!.value as { command: string[] }).command[2]).toContain('[spillway: ');
    expect((arr!.value as { workdir: string }).workdir).toBe('/w');
    const cmd = shellWriteMarker({ cmd: script }, 'sw_x');
    expect((cmd!.value as { cmd: string }).cmd).toContain('written to a.py');
  });

  it('leaves short bodies, commands without a write and its own marker alone', () => {
    expect(shellWriteMarker({ command: `cat > a.py << EOF\nprint(1)\nEOF` }, 'sw_x')).toBeUndefined();
    expect(shellWriteMarker({ command: `ls -la && grep -rn foo .` }, 'sw_x')).toBeUndefined();
    expect(shellWriteMarker('cat > a.py << EOF', 'sw_x')).toBeUndefined();
    const once = shellWriteMarker({ command: `cat > a.py << 'EOF'\n${body('a')}\nEOF` }, 'sw_x')!;
    expect(shellWriteMarker(once.value, 'sw_y')).toBeUndefined();
  });

  it('property: outside the bodies the command is unchanged, and each body becomes one line', () => {
    const word = fc.stringMatching(/^[a-z_]{1,8}$/);
    const lineArb = fc.string({ maxLength: 60 }).map((s) => s.replace(/\n/g, ' '));
    fc.assert(
      fc.property(
        fc.array(fc.record({ file: word, lines: fc.array(lineArb, { minLength: 20, maxLength: 40 }), before: lineArb }), {
          minLength: 1,
          maxLength: 4,
        }),
        (parts) => {
          const command = parts
            .map((p) => `${p.before}\ncat > ${p.file}.txt << 'EOF'\n${['x'.repeat(20), ...p.lines].join('\n')}\nEOF`)
            .join('\n');
          const found = heredocWrites(command);
          const out = shellWriteMarker({ command }, 'sw_h');
          const next = (out?.value as { command: string } | undefined)?.command ?? command;
          // rebuild: what is outside every body is the same text in the same order
          let outside = '';
          let at = 0;
          for (const w of found) {
            outside += command.slice(at, w.start);
            at = w.end;
          }
          outside += command.slice(at);
          const kept = next.replace(/\[spillway: [^\n]*\]\n/g, '');
          const bigEnough = found.every((w) => w.end - w.start >= 300);
          if (bigEnough) expect(kept).toBe(outside);
          expect(next.length).toBeLessThanOrEqual(command.length + 0);
        },
      ),
      { numRuns: Number(process.env.SPILLWAY_PROP_RUNS ?? 100) },
    );
  });
});

describe('the inputs stage on shell calls', () => {
  const history = 'x'.repeat(3_000);
  const command = `cd /testbed && cat > repro.py << 'EOF'\n${body('repro', 120)}\nEOF\npython repro.py`;

  it('replaces the body in an Anthropic Bash call, reads back exactly, and is sticky', () => {
    const store = new MemorySink();
    const e = createEngine({ inputs: { when: 'arrival', minTokens: 1_000 } }, { store, tokenizer: perChar });
    const req = {
      model: 'claude',
      max_tokens: 10,
      messages: [
        { role: 'user', content: history },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'b1', name: 'Bash', input: { command, description: 'write and run' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b1', content: 'ok' }] },
      ],
    };
    const p = e.project(req, 'anthropic-messages', { session: 's' });
    expect(p.inputs).toHaveLength(1);
    const sent = (p.request as typeof req).messages[1]!.content[0] as { input: { command: string; description: string } };
    expect(sent.input.description).toBe('write and run');
    expect(sent.input.command).toContain('written to repro.py');
    expect(sent.input.command.endsWith('\nEOF\npython repro.py')).toBe(true);
    expect(JSON.parse(store.get(p.inputs[0]!.handle)!)).toEqual({ command, description: 'write and run' });
    expect(p.inputs[0]!.reason).toContain('repro.py');
    // the next call sends the same marker text
    const again = e.project(
      {
        ...req,
        messages: [...req.messages, { role: 'assistant', content: [{ type: 'text', text: 'done' }] }, { role: 'user', content: 'thanks' }],
      },
      'anthropic-messages',
      { session: 's' },
    );
    expect(((again.request as typeof req).messages[1]!.content[0] as { input: { command: string } }).input.command).toBe(
      sent.input.command,
    );
  });

  it('replaces it in a Chat Completions tool call (arguments are a JSON string)', () => {
    const store = new MemorySink();
    const e = createEngine({ inputs: { when: 'arrival', minTokens: 1_000 } }, { store, tokenizer: perChar });
    const args = JSON.stringify({ command });
    const req = {
      model: 'deepseek-chat',
      messages: [
        { role: 'user', content: history },
        {
          role: 'assistant',
          content: 'THOUGHT: write it',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: args } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    };
    const p = e.project(req, 'openai-chat');
    const sentArgs = (p.request as typeof req).messages[1]!.tool_calls![0]!.function.arguments;
    expect(JSON.parse(sentArgs).command).toContain('[spillway: ');
    expect(store.get(p.inputs[0]!.handle)).toBe(args);
  });

  it('leaves shell calls alone when inputs.shellTools is empty, or before inputs.minTokens', () => {
    const req = {
      model: 'claude',
      max_tokens: 10,
      messages: [
        { role: 'user', content: history },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'b1', name: 'Bash', input: { command } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b1', content: 'ok' }] },
      ],
    };
    const off = createEngine(
      { inputs: { when: 'arrival', minTokens: 1_000, shellTools: [] } },
      { store: new MemorySink(), tokenizer: perChar },
    );
    expect(off.project(req, 'anthropic-messages').inputs).toEqual([]);
    const early = createEngine({ inputs: { when: 'arrival', minTokens: 50_000 } }, { store: new MemorySink(), tokenizer: perChar });
    expect(early.project(req, 'anthropic-messages').inputs).toEqual([]);
  });
});
