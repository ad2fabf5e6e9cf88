/**
 * What the miss rate counts as an identifier: something an agent would have to read back. Each
 * category is pinned positively and negatively, with strings taken from the real fixtures in
 * test/fixtures/sessions/ (the long Claude Code session and the mini-swe-agent text-mode trajectories).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identifiersIn, identifiersWithCategory, isIdentifierWord, missedIdentifiers } from '../../src/replay/metrics';
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
    expect(isIdentifierWord('__eq__')).toBe(true);
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

  it('dotted names (requests-1142: sys.stderr.write, self.headers.get), not e.g. or i.e.', () => {
    const text = 'calls sys.stderr.write and self.headers.get, e.g. here, i.e. there, etc.';
    expect(categoryOf(text, 'sys.stderr.write')).toBe('dotted');
    expect(categoryOf(text, 'self.headers.get')).toBe('dotted');
    expect(identifiersIn(text)).toEqual(['sys.stderr.write', 'self.headers.get']);
  });

  it('camelCase, PascalCase with an inner capital and snake_case names (Claude Code records, sympy)', () => {
    const text = 'set parentUuid and isSidechain, raise ModuleNotFoundError, count video_tokens in __eq__';
    for (const id of ['parentUuid', 'isSidechain', 'ModuleNotFoundError', 'video_tokens', '__eq__'])
      expect(categoryOf(text, id)).toBe('name');
    expect(identifiersIn('Raise the Error and count the tokens')).toEqual([]);
  });

  it('numbers of three or more digits, not shorter ones or parts of decimals', () => {
    expect(identifiersIn('outputs up to 868167 chars, 70-130 calls, 12 files, version 2.123')).toEqual(['868167', '130']);
  });

  it('quoted strings that are more than one plain word; JSON keys are not', () => {
    const text = '{"description":"Create commit","command":"git status"} and \'Unable to import\'';
    const ids = identifiersIn(text);
    expect(ids).toEqual(expect.arrayContaining(['Create commit', 'git status', 'Unable to import']));
    expect(ids).not.toContain('description');
    expect(ids).not.toContain('command');
  });
});

describe('on the long real sessions', () => {
  it('the replies of the long Claude Code session name identifiers of every common kind and no plain ten-letter word', () => {
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
    for (const c of ['path', 'dotted', 'name', 'number', 'quoted'] as const) expect(cats.has(c)).toBe(true);
    for (const x of ids) if (x.category !== 'quoted') expect(x.id).not.toMatch(/^(?:[a-z]+|[A-Z][a-z]+)$/);
  });

  it('a miss is an identifier the original had and the projection lost', () => {
    const m = missedIdentifiers(
      'Look at sys.stderr.write in environment.py',
      'sys.stderr.write environment.py environment',
      'environment.py',
    );
    expect(m).toEqual({ referenced: ['environment.py', 'sys.stderr.write'], missed: ['sys.stderr.write'] });
  });
});
