/**
 * What the miss rate counts as an identifier: something an agent could not have written without
 * reading it. Each category is pinned positively and negatively, with strings taken from the real
 * replies in test/fixtures/sessions/ (the Claude Code sessions and the mini-swe-agent trajectories);
 * the previous definition (`before`) is pinned too, since the replay reports both counts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identifiersIn, identifiersWithCategory, isIdentifierWord, missedIdentifiers } from '../../src/replay/identifiers';
import { LONG } from '../support/corpus';

const categoryOf = (text: string, id: string) => identifiersWithCategory(text).find((x) => x.id === id)?.category;

describe('plain words are not identifiers, however long', () => {
  it('the ten-letter words the old rule counted (from the long Claude Code session) are not identifiers', () => {
    // "Session environment data", "Two visibility modes", "## Plugin Components"
    expect(identifiersIn('- `session-env/` - Session environment data')).not.toContain('environment');
    expect(identifiersIn('- Two visibility modes:')).toEqual([]);
    expect(identifiersIn('## Plugin Components')).toEqual([]);
    expect(identifiersIn('The executable needs validation before the implementation')).toEqual([]);
  });

  it('all-capital words and single quoted plain words are not identifiers', () => {
    expect(identifiersIn('See the README and the API, IMPORTANT: use JSON')).toEqual([]);
    expect(identifiersIn('run \'environment\' and "visibility"')).toEqual([]);
  });

  it('words with an inner capital, an underscore or a digit are not plain', () => {
    expect(isIdentifierWord('environment')).toBe(false);
    expect(isIdentifierWord('Components')).toBe(false);
    expect(isIdentifierWord('sessionId')).toBe(true);
    expect(isIdentifierWord('video_tokens')).toBe(true);
    expect(isIdentifierWord('o200k')).toBe(true);
    expect(isIdentifierWord('2nd')).toBe(false);
  });
});

describe('each category of identifier', () => {
  it('paths: slash paths and file names with a source extension, but not and/or', () => {
    const text = 'Read /Users/pete/git/moredip/session-share/docs/plan.md and roadmap.md, input/output and/or I/O';
    expect(categoryOf(text, '/Users/pete/git/moredip/session-share/docs/plan.md')).toBe('path');
    expect(categoryOf(text, 'roadmap.md')).toBe('path');
    expect(identifiersIn(text)).not.toContain('input/output');
    expect(identifiersIn(text)).not.toContain('and/or');
    expect(identifiersIn(text)).not.toContain('I/O');
  });

  it('file:line: one identifier, its parts not counted again (pylint output in the pylint-6528 trajectory)', () => {
    const text = "pylint/testutils/primer.py:10:0: E0401: Unable to import 'git' (import-error)";
    const ids = identifiersWithCategory(text);
    expect(ids[0]).toEqual({ id: 'pylint/testutils/primer.py:10:0', category: 'file-line' });
    expect(ids.map((x) => x.id)).not.toContain('pylint/testutils/primer.py');
    expect(identifiersIn('see models.py:1234 for it')).toEqual(['models.py:1234']);
    expect(identifiersIn('at 10:30 today')).toEqual([]);
  });

  it('error codes: compiler and linter codes, errno names, HTTP statuses', () => {
    expect(categoryOf("primer.py:10:0: E0401: Unable to import 'git'", 'E0401')).toBe('error-code');
    expect(categoryOf('error TS2345: Argument of type', 'TS2345')).toBe('error-code');
    expect(categoryOf('Error: ENOENT: no such file or directory', 'ENOENT')).toBe('error-code');
    expect(categoryOf('the server said HTTP 404', 'HTTP 404')).toBe('error-code');
    expect(identifiersIn('ERROR: EVERY ENTRY')).toEqual([]);
  });

  it('dotted names (django-11910: remote_field.field_name, self.headers.get), not e.g. or i.e.', () => {
    const text = 'calls remote_field.field_name and self.headers.get, e.g. here, i.e. there, etc.';
    expect(categoryOf(text, 'remote_field.field_name')).toBe('dotted');
    expect(categoryOf(text, 'self.headers.get')).toBe('dotted');
    expect(identifiersIn(text)).toEqual(['remote_field.field_name', 'self.headers.get']);
  });

  it('camelCase, PascalCase with an inner capital and snake_case names (Claude Code records, django)', () => {
    const text = 'set parentUuid and isSidechain, raise AlterOrderWithRespectTo, count video_tokens in order_with_respect_to';
    for (const id of ['parentUuid', 'isSidechain', 'AlterOrderWithRespectTo', 'video_tokens', 'order_with_respect_to'])
      expect(categoryOf(text, id)).toBe('name');
    expect(identifiersIn('Raise the Error and count the tokens')).toEqual([]);
  });

  it('numbers of four or more digits that are not round or years, and located ones of three (sympy, django replies)', () => {
    expect(identifiersIn('outputs up to 868167 chars, 70-130 calls, 12 files, version 2.123')).toEqual(['868167']);
    expect(identifiersIn('see basic.py around 3223 and line 330, issue #812')).toEqual(['basic.py', '3223', '330', '812']);
    expect(identifiersIn('timeout 60000 or 120000 ms, in 2025, 1024 tokens, port 8080')).toEqual([]);
  });

  it('quoted strings that are exact text; prose, flags and JSON keys are not', () => {
    const text = '{"description":"Create commit","command":"git status"} and \'test-secret-key\' or \'if data is None: return\'';
    const ids = identifiersIn(text);
    expect(ids).toEqual(expect.arrayContaining(['test-secret-key', 'if data is None: return']));
    for (const id of ['description', 'command', 'Create commit', 'git status']) expect(ids).not.toContain(id);
  });

  it('hashes and error codes are kept: a commit, a colour-like hex run, a pylint code', () => {
    expect(identifiersIn('reset to d66418 then fix C0104 and W0611')).toEqual(['C0104', 'W0611', 'd66418']);
  });
});

describe('what an agent writes without reading is not an identifier (real replies from the corpus)', () => {
  it("punctuation fragments between two quoted strings (gitleaks-redact: open(src_file, 'r', encoding='utf-8', errors='replace'))", () => {
    const reply = "with open(src_file, 'r', encoding='utf-8', errors='replace') as f:";
    const ids = identifiersIn(reply);
    for (const id of [', encoding=', ', errors=', 'utf-8']) expect(ids).not.toContain(id);
    expect(ids).toContain('src_file');
    // the previous definition counted two of those fragments
    expect(identifiersIn(reply, 'before')).toEqual(expect.arrayContaining([', encoding=', ', errors=']));
  });

  it('a quote that opens a parenthesis (cosmic-applet: "just show total system power (e.g., \'47.5W\')")', () => {
    const reply = '{"description":"Simple: just show total system power (e.g., \'47.5W\'). Clean and minimal."}';
    expect(identifiersIn(reply).some((id) => id.includes('e.g.'))).toBe(false);
  });

  it('dunders, builtins and escapes in a script the agent wrote (gitleaks-redact: if __name__ == \\"__main__\\")', () => {
    const reply = '{"content":"    print(\\"Sync complete!\\")\\n\\nif __name__ == \\"__main__\\":\\n    main()\\n## Syncing\\nTo sync"}';
    const ids = identifiersIn(reply);
    for (const id of ['__name__', '__main__', 'nTo', 'nif', 'content']) expect(ids).not.toContain(id);
    expect(identifiersIn(reply, 'before')).toEqual(expect.arrayContaining(['__name__', 'nTo']));
  });

  it('command names and short bare numbers (router-ssh: python3 -c, a netmask of 255)', () => {
    const reply = "python3 -c \"e1 = int(open('/tmp/e1.txt').read())\"; grep -v -E '255.255.255.(0|255)' and HTTP 200";
    const ids = identifiersIn(reply);
    for (const id of ['python3', '255', '200']) expect(ids).not.toContain(id);
    expect(ids).toContain('/tmp/e1.txt');
    expect(identifiersIn(reply, 'before')).toEqual(expect.arrayContaining(['python3', '255']));
  });

  it('language builtins, shell variables, standard paths and conventional files', () => {
    const reply = 'raise TypeError or return NotImplemented; console.log(JSON.stringify(x)); echo $HOME > /dev/null; see README.md';
    expect(identifiersIn(reply)).toEqual([]);
  });

  it("Java's standard library is written from memory, a project's own packages are read (fastjson2: import java.util.List)", () => {
    const reply = 'import java.util.List;\nimport java.util.concurrent.ConcurrentHashMap;\nimport com.alibaba.fastjson2.TypeReference;';
    expect(identifiersIn(reply)).toEqual(['com.alibaba.fastjson2.TypeReference']);
    expect(identifiersIn(reply, 'before')).toEqual(expect.arrayContaining(['java.util.List']));
  });

  it("keys of the agent's own tool call come from the tool's schema", () => {
    const reply = '{"file_path":"/home/u/app/src/main.rs","old_string":"let x = 1;","new_string":"let x = 2;"}';
    expect(identifiersIn(reply)).toEqual(['/home/u/app/src/main.rs', 'let x = 1;', 'let x = 2;']);
  });
});

describe('on the long real sessions', () => {
  it('the replies of the long Claude Code session name paths, dotted names, names and exact strings, no plain word and no number it wrote itself', () => {
    const text = readFileSync(join(LONG, 'claude-code/session-share__general-tool-calls.jsonl'), 'utf8');
    const replies: string[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      const r = JSON.parse(line) as { type?: string; message?: { content?: unknown } };
      if (r.type !== 'assistant' || !Array.isArray(r.message?.content)) continue;
      for (const b of r.message.content as { type: string; text?: string; input?: unknown }[]) {
        if (b.type === 'text' && b.text) replies.push(b.text);
        if (b.type === 'tool_use') replies.push(JSON.stringify(b.input));
      }
    }
    const ids = identifiersWithCategory(replies.join('\n'));
    const cats = new Set(ids.map((x) => x.category));
    for (const c of ['path', 'dotted', 'name', 'quoted'] as const) expect(cats.has(c)).toBe(true);
    // its numbers were a count and a timeout (100, 120000): written, not read
    expect(
      identifiersWithCategory(replies.join('\n'), 'before')
        .filter((x) => x.category === 'number')
        .map((x) => x.id),
    ).toEqual(expect.arrayContaining(['100', '120000']));
    expect(cats.has('number')).toBe(false);
    for (const x of ids) if (x.category !== 'quoted') expect(x.id).not.toMatch(/^(?:[a-z]+|[A-Z][a-z]+)$/);
  });

  it('a miss is an identifier the original had and the projection lost; the previous definition is counted beside it', () => {
    const m = missedIdentifiers(
      'Look at remote_field.field_name in environment.py, then __eq__',
      'remote_field.field_name environment.py environment __eq__',
      'environment.py',
    );
    expect(m).toEqual({
      referenced: ['environment.py', 'remote_field.field_name'],
      missed: ['remote_field.field_name'],
      referencedBefore: 3,
      missedBefore: 2,
    });
  });
});
