/**
 * Byte-preserving edits of an agent's JSON settings file (Claude Code's `.mcp.json` and
 * `.claude/settings.local.json`): add or remove one member, or one string in an array, and leave
 * every other byte of the user's file as it was (their order, indentation, line endings, escapes).
 *
 * Why not parse and re-serialise: the file is the user's. A rewrite would reorder nothing in
 * JSON.stringify's case but would still re-indent, re-escape and drop a trailing newline, and a
 * diff of a checked-in `.mcp.json` would show the whole file. So the edit is textual, at positions
 * the engine's lazy JSON reader reports, in the file's own indentation; and every result is checked
 * the way codexConfig.ts checks its TOML: the file after must parse to exactly the file before with
 * the one change, or the edit is refused and the file left alone. A file that is not JSON (or whose
 * top level is not an object) is reported, never rewritten.
 */
import { isDeepStrictEqual } from 'node:util';
import { decodeString, parseLazy, type JObject, type JValue } from '../engine/json';

/** Why an edit was not made; the file is left untouched. */
export class JsonFileError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid-json' | 'user-value' | 'check-failed',
  ) {
    super(message);
    this.name = 'JsonFileError';
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const BOM = '\uFEFF';

/**
 * The file's value and tree, after a BOM (`offset`). An empty file is taken as `{}` with a final
 * newline (`body` is then that text), so adding to a file that does not exist yet gives a normal file.
 */
function parseObject(text: string, what: string): { root: JObject; value: JsonObject; offset: number; body: string } {
  const offset = text.startsWith(BOM) ? 1 : 0;
  const body = text.slice(offset).trim() === '' ? '{}\n' : text.slice(offset);
  let value: unknown;
  let root: JValue;
  try {
    value = JSON.parse(body);
    root = parseLazy(body);
  } catch (e) {
    throw new JsonFileError(`${what} is not valid JSON (${(e as Error).message.split('\n')[0]}); it was left unchanged`, 'invalid-json');
  }
  if (root.kind !== 'object' || value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new JsonFileError(`${what} must hold a JSON object at the top; it was left unchanged`, 'invalid-json');
  }
  return { root, value: value as JsonObject, offset, body };
}

/** The file's indentation unit (two spaces unless its first indented line says otherwise) and line ending. */
function style(text: string): { unit: string; eol: string } {
  const m = /\n([ \t]+)\S/.exec(text);
  return { unit: m ? m[1]! : '  ', eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** The whitespace that starts the line holding `at`. */
function indentAt(text: string, at: number): string {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** `value` as JSON laid out at `indent` in the file's style. */
function render(value: Json, indent: string, unit: string, eol: string): string {
  const s = JSON.stringify(value, null, unit);
  return s.split('\n').join(eol + indent);
}

/** The node at `path` (object keys), or undefined. */
function nodeAt(root: JValue, path: readonly string[]): JValue | undefined {
  let node: JValue | undefined = root;
  for (const key of path) {
    if (node?.kind !== 'object') return undefined;
    const i: number = node.keys.lastIndexOf(key);
    node = i < 0 ? undefined : node.values[i];
  }
  return node;
}

/** Inserts `"key": value` as the last member of the object `obj` (its own text is `text`). */
function insertMember(text: string, obj: JObject, key: string, value: Json): string {
  const { unit, eol } = style(text);
  const close = obj.end - 1;
  if (obj.keys.length === 0) {
    const outer = indentAt(text, obj.start);
    const inner = outer + unit;
    return `${text.slice(0, obj.start + 1)}${eol}${inner}${JSON.stringify(key)}: ${render(value, inner, unit, eol)}${eol}${outer}${text.slice(close)}`;
  }
  const last = obj.values[obj.values.length - 1]!;
  const inner = indentAt(text, keyStart(text, last));
  return `${text.slice(0, last.end)},${eol}${inner}${JSON.stringify(key)}: ${render(value, inner, unit, eol)}${text.slice(last.end)}`;
}

/** Where the member whose value is `value` starts: its key's opening quote. */
function keyStart(text: string, value: JValue): number {
  const colon = text.lastIndexOf(':', value.start);
  let q = text.lastIndexOf('"', colon);
  // the key's closing quote is at q; walk back to its opening quote (keys may hold escaped quotes)
  q = text.lastIndexOf('"', q - 1);
  while (q > 0 && text[q - 1] === '\\') q = text.lastIndexOf('"', q - 2);
  return q;
}

/** Removes the `index`-th entry of a container whose entries span [starts[i], ends[i]). */
function removeEntry(text: string, starts: number[], ends: number[], index: number): string {
  const n = starts.length;
  if (n === 1) {
    // the only entry: it goes with the whitespace around it, leaving the brackets
    let from = starts[0]!;
    let to = ends[0]!;
    while (from > 0 && /\s/.test(text[from - 1]!)) from--;
    while (to < text.length && /\s/.test(text[to]!)) to++;
    return text.slice(0, from) + text.slice(to);
  }
  if (index === n - 1) {
    // the last: from the end of the one before (its comma goes) to the end of this one
    return text.slice(0, ends[index - 1]!) + text.slice(ends[index]!);
  }
  // otherwise: from this entry's start to the next entry's start
  return text.slice(0, starts[index]!) + text.slice(starts[index + 1]!);
}

export interface JsonEdit {
  /** the new text of the file */
  text: string;
  /** whether the text changed */
  changed: boolean;
}

/** Checks that `out` parses to `expected`, the file's value with the one change. */
function checked(text: string, out: string, expected: JsonObject, what: string, change: string): JsonEdit {
  let after: unknown;
  try {
    after = JSON.parse(out.startsWith(BOM) ? out.slice(1) : out);
  } catch {
    after = undefined;
  }
  if (!isDeepStrictEqual(after, expected)) {
    throw new JsonFileError(`${what}: ${change} would change other settings; the file was left unchanged`, 'check-failed');
  }
  return { text: out, changed: out !== text };
}

function clone(value: JsonObject): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** The object at `path` in a plain value, created (as `{}`) where missing. */
function objectIn(value: JsonObject, path: readonly string[]): JsonObject {
  let o = value;
  for (const key of path) {
    const next = o[key];
    if (next === undefined) o[key] = {};
    o = o[key] as JsonObject;
  }
  return o;
}

/** Describes a path for messages: `mcpServers.spillway`. */
function dotted(path: readonly string[]): string {
  return path.join('.');
}

/**
 * Sets the member at `path` to `value`, creating the objects on the way. `owned(current)` says
 * whether an existing value is one Spillway wrote (then it is replaced); a value the user wrote is
 * refused ('user-value'). An equal value is left as it is.
 */
export function setMember(text: string, path: readonly string[], value: Json, owned: (current: Json) => boolean, what: string): JsonEdit {
  const { root, value: before, offset, body } = parseObject(text, what);
  const expected = clone(before);
  const parentPath = path.slice(0, -1);
  const key = path[path.length - 1]!;
  // every object on the way must be an object (or missing)
  let o: Json = before;
  for (const k of parentPath) {
    o = (o as JsonObject)[k] as Json;
    if (o === undefined) break;
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      throw new JsonFileError(`${what}: ${dotted(parentPath)} is not an object; the file was left unchanged`, 'user-value');
    }
  }
  objectIn(expected, parentPath)[key] = value;
  const current = nodeAt(root, path);
  if (current) {
    const now = (o as JsonObject)[key]!;
    if (isDeepStrictEqual(now, value)) return { text, changed: false };
    if (!owned(now)) {
      throw new JsonFileError(
        `${what} already sets ${dotted(path)} = ${JSON.stringify(now)} itself; Spillway leaves it alone`,
        'user-value',
      );
    }
    const { unit, eol } = style(body);
    const indent = indentAt(body, keyStart(body, current));
    const out = body.slice(0, current.start) + render(value, indent, unit, eol) + body.slice(current.end);
    return checked(text, text.slice(0, offset) + out, expected, what, `setting ${dotted(path)}`);
  }
  // the deepest object that exists, and what to insert into it
  let depth = parentPath.length;
  while (depth > 0 && !nodeAt(root, parentPath.slice(0, depth))) depth--;
  const host = nodeAt(root, parentPath.slice(0, depth)) as JObject;
  let insert: Json = value;
  for (let i = path.length - 1; i > depth; i--) insert = { [path[i]!]: insert };
  const out = insertMember(body, host, path[depth]!, insert);
  return checked(text, text.slice(0, offset) + out, expected, what, `adding ${dotted(path)}`);
}

/**
 * Removes the member at `path` when `owned(current)` says Spillway wrote it; a user's value, or no
 * value, leaves the file as it is. Objects the removal leaves empty go too (`dropEmpty`).
 */
export function removeMember(text: string, path: readonly string[], owned: (current: Json) => boolean, what: string): JsonEdit {
  const { root, value: before, offset, body } = parseObject(text, what);
  const parent = nodeAt(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (parent?.kind !== 'object') return { text, changed: false };
  const index = parent.keys.lastIndexOf(key);
  if (index < 0) return { text, changed: false };
  const plainParent = path.slice(0, -1).reduce<Json>((o, k) => (o as JsonObject)[k]!, before) as JsonObject;
  if (!owned(plainParent[key]!)) return { text, changed: false };
  const expected = clone(before);
  delete objectIn(expected, path.slice(0, -1))[key];
  const starts = parent.values.map((v) => keyStart(body, v));
  const ends = parent.values.map((v) => v.end);
  const out = removeEntry(body, starts, ends, index);
  const edit = checked(text, text.slice(0, offset) + out, expected, what, `removing ${dotted(path)}`);
  return dropEmpty(edit, path.slice(0, -1), what);
}

/**
 * After a removal: the containers on `path` that it left empty go too, deepest first, so that
 * adding then removing gives back the file byte for byte (the adding created them). The top-level
 * object always stays.
 */
function dropEmpty(edit: JsonEdit, path: readonly string[], what: string): JsonEdit {
  let text = edit.text;
  for (let p = path; p.length > 0; p = p.slice(0, -1)) {
    const { root } = parseObject(text, what);
    const node = nodeAt(root, p);
    const empty = (node?.kind === 'object' && node.keys.length === 0) || (node?.kind === 'array' && node.items.length === 0);
    if (!empty) break;
    text = removeMember(text, p, () => true, what).text;
  }
  return { text, changed: edit.changed || text !== edit.text };
}

/** Adds the string `item` to the array at `path` (created where missing) unless it is there already. */
export function addToArray(text: string, path: readonly string[], item: string, what: string): JsonEdit {
  const { root, value: before, offset, body } = parseObject(text, what);
  const node = nodeAt(root, path);
  if (!node) return setMember(text, path, [item], () => false, what);
  if (node.kind !== 'array') {
    throw new JsonFileError(`${what}: ${dotted(path)} is not an array; the file was left unchanged`, 'user-value');
  }
  const current = path.reduce<Json>((o, k) => (o as JsonObject)[k]!, before) as Json[];
  if (current.includes(item)) return { text, changed: false };
  const expected = clone(before);
  (path.reduce<Json>((o, k) => (o as JsonObject)[k]!, expected) as Json[]).push(item);
  let out: string;
  if (node.items.length === 0) {
    out = `${body.slice(0, node.start + 1)}${JSON.stringify(item)}${body.slice(node.end - 1)}`;
  } else {
    const last = node.items[node.items.length - 1]!;
    // on the last item's line when the array is on one line, else on a new line at its indentation
    const between = body.slice(node.items[0]!.start, last.start);
    const multiline = between.includes('\n') || body.slice(node.start, node.items[0]!.start).includes('\n');
    const sep = multiline ? `,${style(body).eol}${indentAt(body, last.start)}` : ', ';
    out = `${body.slice(0, last.end)}${sep}${JSON.stringify(item)}${body.slice(last.end)}`;
  }
  return checked(text, text.slice(0, offset) + out, expected, what, `adding ${JSON.stringify(item)} to ${dotted(path)}`);
}

/** Removes the string `item` from the array at `path` (an array, and objects, it leaves empty go too). */
export function removeFromArray(text: string, path: readonly string[], item: string, what: string): JsonEdit {
  const { root, value: before, offset, body } = parseObject(text, what);
  const node = nodeAt(root, path);
  if (node?.kind !== 'array') return { text, changed: false };
  const index = node.items.findIndex((v) => v.kind === 'string' && decodeString(body, v) === item);
  if (index < 0) return { text, changed: false };
  const expected = clone(before);
  const arr = path.reduce<Json>((o, k) => (o as JsonObject)[k]!, expected) as Json[];
  arr.splice(index, 1);
  const out = removeEntry(
    body,
    node.items.map((v) => v.start),
    node.items.map((v) => v.end),
    index,
  );
  const edit = checked(text, text.slice(0, offset) + out, expected, what, `removing ${JSON.stringify(item)} from ${dotted(path)}`);
  return dropEmpty(edit, path, what);
}
