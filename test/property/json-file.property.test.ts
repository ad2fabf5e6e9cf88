/**
 * The JSON settings editor (src/proxy/jsonFile.ts) on any file: adding a member or an array item
 * and taking it back again gives the user's file byte for byte, and the edited file parses to the
 * file's value with exactly the one change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addToArray, removeFromArray, removeMember, setMember } from '../../src/proxy/jsonFile';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);

/** A settings-like object (no key the edits use) written with some indentation and line ending. */
const fileArb = fc
  .record({
    value: fc.dictionary(
      fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['env', 'list', '__proto__'].includes(k)),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 5 },
    ),
    indent: fc.constantFrom('  ', '    ', '\t'),
    crlf: fc.boolean(),
    finalNewline: fc.boolean(),
  })
  .map(({ value, indent, crlf, finalNewline }) => {
    const text = JSON.stringify(value, null, indent) + (finalNewline ? '\n' : '');
    return crlf ? text.replace(/\n/g, '\r\n') : text;
  });

describe('byte-preserving JSON edits, as properties', () => {
  it('set then remove a nested member gives the file back, and the edit is exactly that member', () => {
    fc.assert(
      fc.property(fileArb, fc.string({ maxLength: 20 }), (text, url) => {
        const added = setMember(text, ['env', 'URL'], url, () => false, 'f');
        expect(JSON.parse(added.text)).toEqual({ ...JSON.parse(text), env: { URL: url } });
        expect(removeMember(added.text, ['env', 'URL'], () => true, 'f').text).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('add then remove an array item gives the file back', () => {
    fc.assert(
      fc.property(fileArb, fc.string({ maxLength: 20 }), (text, item) => {
        const added = addToArray(text, ['list'], item, 'f');
        expect(JSON.parse(added.text).list).toEqual([item]);
        expect(removeFromArray(added.text, ['list'], item, 'f').text).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });
});
