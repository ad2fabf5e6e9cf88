import { describe, expect, it } from 'vitest';
import {
  documentExtension,
  documentPath,
  documentTitle,
  firstContentLine,
  lineHolding,
  readToolText,
  markerTextFor,
  parseDocumentPath,
  safeSegment,
  toolInputPaths,
} from '../../src/extension/pure/documents';
import { sourceExtension } from '../../src/engine/names';

const H = 'sw_0123456789abcdef01234567';

describe('document names', () => {
  it('titles a stored output by tool and call when neither file nor command is known, not by hash', () => {
    expect(documentTitle({ tool: 'bash', callId: 'call_abc123', ext: '.log' })).toBe('bash · call_abc123.log');
    const path = documentPath({ handle: H, tool: 'bash', callId: 'call_abc123', ext: '.log' });
    expect(path).toBe(`/${H}/call_abc123/bash · call_abc123.log`);
    expect(path.split('/').pop()).not.toContain('sw_');
  });

  it('titles an output by the file it came from, the call id in the folder the tooltip shows', () => {
    const name = { handle: H, tool: 'Read', callId: 'toolu_01CVk', ext: '.py', sourcePath: 'C:/Users/x/scripts/sync_raw_logs.py' };
    expect(documentTitle(name)).toBe('sync_raw_logs.py');
    expect(documentPath(name)).toBe(`/${H}/toolu_01CVk/sync_raw_logs.py`);
    // the content decides the language: a JSON answer about a .ts file keeps both
    expect(documentTitle({ ...name, sourcePath: 'src/a.ts', ext: '.json' })).toBe('a.ts.json');
  });

  it('titles an output by the command that printed it', () => {
    expect(documentTitle({ tool: 'Bash', callId: 'toolu_2', ext: '.log', command: 'npm test -- --run\necho done' })).toBe(
      '$ npm test -- --run.log',
    );
  });

  it('puts the projected text under /projected/', () => {
    expect(documentPath({ handle: H, tool: 'bash', callId: 'c', ext: '.log', projected: true })).toBe(`/${H}/projected/c/bash · c.log`);
    // a call id spelled like the folder cannot be taken for it
    expect(documentPath({ handle: H, tool: 'bash', callId: 'projected', ext: '.log' })).toBe(`/${H}/_projected/bash · projected.log`);
  });

  it('keeps slashes, control characters and dot segments out of titles', () => {
    expect(safeSegment('mcp/server\\tool', 'x')).toBe('mcp_server_tool');
    expect(safeSegment('..', 'x')).toBe('x');
    expect(safeSegment('a\nb', 'x')).toBe('a_b');
    expect(safeSegment(undefined, 'tool')).toBe('tool');
    expect(safeSegment('y'.repeat(200), 'x').length).toBe(60);
  });

  it('reads the handle back and round-trips', () => {
    const path = documentPath({ handle: H, tool: 'Read', callId: 'toolu_1', ext: '.ts' });
    expect(parseDocumentPath(path)).toEqual({ ok: true, handle: H, projected: false, isDir: false });
    expect(parseDocumentPath(documentPath({ handle: H, ext: '.log', projected: true }))).toEqual({
      ok: true,
      handle: H,
      projected: true,
      isDir: false,
    });
    expect(parseDocumentPath(`/${H}`)).toEqual({ ok: true, handle: H, projected: false, isDir: true });
    expect(parseDocumentPath(`/${H}/toolu_1`)).toEqual({ ok: true, handle: H, projected: false, isDir: true });
  });

  it('refuses handles with .. or slashes and anything not shaped like a handle', () => {
    for (const p of [
      '/../etc/passwd',
      '/sw_0123/x.log',
      `/${H}/../../x`,
      `/${H}/a/b/c`,
      '/',
      'relative',
      `/${H}x/a.log`,
      '/SW_0123456789ABCDEF01234567/a',
    ]) {
      expect(parseDocumentPath(p).ok, p).toBe(false);
    }
  });
});

describe("Claude Code's numbered Read output", () => {
  it("is shown at the file's own line numbers, without the N→ prefixes", () => {
    expect(readToolText('     1→import os\n     2→\n     3→print(1)')).toBe('import os\n\nprint(1)');
  });

  it('starts a read from line 40 on line 40, and keeps what follows the numbered lines', () => {
    const text = readToolText('    40→def f():\n    41→    pass\n\n<system-reminder>x</system-reminder>')!;
    const lines = text.split('\n');
    expect(lines[39]).toBe('def f():');
    expect(lines.slice(0, 39).every((l) => l === '')).toBe(true);
    expect(text.endsWith('\n<system-reminder>x</system-reminder>')).toBe(true);
  });

  it('leaves text that is not numbered alone', () => {
    expect(readToolText('total 8\n-rw-r--r-- a')).toBeUndefined();
  });

  it('opens a read of a file from line 425 at line 425, its first line of content, not on the blank lines above it', () => {
    const text = readToolText('   425→.card {\n   426→  color: red;\n   427→}')!;
    expect(firstContentLine(text)).toBe(424);
    expect(text.split('\n')[firstContentLine(text)]).toBe('.card {');
  });

  it('opens a text that starts with content, or holds none, at its first line', () => {
    expect(firstContentLine('a\n\nb')).toBe(0);
    expect(firstContentLine('\n\n  \n')).toBe(0);
    expect(firstContentLine('')).toBe(0);
    expect(firstContentLine('\n\n  x')).toBe(2);
  });
});

describe('a missed identifier', () => {
  it('opens at the line and column that hold it', () => {
    expect(lineHolding('a\nbb sync_raw_logs\nc', 'sync_raw_logs')).toEqual({ line: 1, character: 3 });
    expect(lineHolding('abc', 'zzz')).toBeUndefined();
  });
});

describe('language by content and tool input', () => {
  it('is JSON when the output parses as JSON', () => {
    expect(documentExtension('{"a": [1, 2]}')).toBe('.json');
    expect(documentExtension('  [1,2]\n')).toBe('.json');
    expect(documentExtension('{not json')).toBe('.log');
  });

  it('is a diff when the output looks like a unified diff', () => {
    expect(documentExtension('diff --git a/x b/x\nindex 1..2\n')).toBe('.diff');
    expect(documentExtension('--- a/x.ts\n+++ b/x.ts\n@@ -1,2 +1,2 @@\n-a\n+b\n')).toBe('.diff');
    expect(documentExtension('--- a heading\nnot a diff\n')).toBe('.log');
  });

  it('takes the source extension from the file the tool call named', () => {
    expect(documentExtension('export const x = 1;\n', 'src/a/b.ts')).toBe('.ts');
    expect(documentExtension('x = 1\n', '/repo/main.PY')).toBe('.py');
    expect(documentExtension('plain\n', 'notes.unknownext')).toBe('.log');
    expect(sourceExtension('Makefile')).toBeUndefined();
    expect(sourceExtension(undefined)).toBeUndefined();
  });

  it('prefers content over the path: JSON about a .ts file is JSON', () => {
    expect(documentExtension('{"ok":true}', 'a.ts')).toBe('.json');
  });

  it('is log otherwise', () => {
    expect(documentExtension('PASS src/a.test.ts\nFAIL src/b.test.ts\n')).toBe('.log');
  });
});

describe('tool input paths', () => {
  it('finds paths in Anthropic tool_use, OpenAI Chat tool_calls and Responses function_call', () => {
    const anthropic = {
      messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/r/a.ts' } }] }],
    };
    const chat = {
      messages: [
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.py"}' } }],
        },
      ],
    };
    const responses = { input: [{ type: 'function_call', call_id: 'fc_1', name: 'cat', arguments: '{"filename":"c.go"}' }] };
    expect(toolInputPaths(anthropic).get('toolu_1')).toBe('/r/a.ts');
    expect(toolInputPaths(JSON.stringify(chat)).get('call_1')).toBe('b.py');
    expect(toolInputPaths(responses).get('fc_1')).toBe('c.go');
    expect(toolInputPaths('not json').size).toBe(0);
  });

  it('takes the file a simple cat/head/sed command prints, not a pipeline', () => {
    const req = (command: string) => ({
      messages: [{ tool_calls: [{ id: 'c', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] }],
    });
    expect(toolInputPaths(req('cat /testbed/django/views/autocomplete.py')).get('c')).toBe('/testbed/django/views/autocomplete.py');
    expect(toolInputPaths(req('sed -n 1,80p src/x.go')).get('c')).toBe('src/x.go');
    expect(toolInputPaths(req('head -n 50 "src/a.ts"')).get('c')).toBe('src/a.ts');
    expect(toolInputPaths(req('cat a.py | grep x')).get('c')).toBeUndefined();
    expect(toolInputPaths(req('ls -la src')).get('c')).toBeUndefined();
  });
});

describe('marker text', () => {
  it('finds the string that carries the handle in any wire format', () => {
    const projected = {
      messages: [
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: `[output offloaded: ${H}]` }] }],
        },
      ],
    };
    expect(markerTextFor(projected, H)).toBe(`[output offloaded: ${H}]`);
    expect(markerTextFor(JSON.stringify(projected), H)).toBe(`[output offloaded: ${H}]`);
    expect(markerTextFor({ a: 'nothing' }, H)).toBeUndefined();
  });
});
