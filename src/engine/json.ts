/**
 * A lazy JSON reader that keeps every value's position in the source text.
 *
 * Why not `JSON.parse`: the engine must hand back the request byte for byte where it changes
 * nothing (DESIGN.md: identity, format fidelity), so it patches the original text at known
 * positions instead of re-serialising a parsed object. Knowing positions also lets it skip the
 * bulk of a request: long strings (tool output) are located with native `indexOf` and only decoded
 * when the engine actually needs their text, which is what keeps projection cheaper than a parse.
 *
 * Objects and arrays become small nodes; strings keep their span and decode on demand.
 */
import { SpillwayError } from './types';

export interface JString {
  kind: 'string';
  start: number;
  end: number;
  escaped: boolean;
}
interface JNumber {
  kind: 'number';
  start: number;
  end: number;
}
interface JLiteral {
  kind: 'true' | 'false' | 'null';
  start: number;
  end: number;
}
interface JArray {
  kind: 'array';
  start: number;
  end: number;
  items: JValue[];
}
export interface JObject {
  kind: 'object';
  start: number;
  end: number;
  keys: string[];
  values: JValue[];
}
export type JValue = JString | JNumber | JLiteral | JArray | JObject;

/** Deepest nesting accepted; far beyond any real request, low enough to never exhaust the stack. */
const MAX_DEPTH = 512;

const QUOTE = 34,
  BACKSLASH = 92,
  COMMA = 44,
  COLON = 58;
const LBRACE = 123,
  RBRACE = 125,
  LBRACKET = 91,
  RBRACKET = 93;

/**
 * Nodes from an earlier parse of a text that shares its first `upTo` characters with this one. A
 * node that starts at the same offset and ends before `upTo` is the same node, so it is taken as is
 * instead of being parsed again: a long session's next request is parsed only where it changed.
 */
export interface ParseReuse {
  nodes: Map<number, JValue>;
  upTo: number;
}

/** The nodes worth reusing: the values of containers down to `depth` levels, by start offset. */
export function reusableNodes(root: JValue, depth = 3): Map<number, JValue> {
  const nodes = new Map<number, JValue>();
  const walk = (n: JValue, d: number) => {
    const children = n.kind === 'object' ? n.values : n.kind === 'array' ? n.items : undefined;
    if (!children || d === 0) return;
    for (const c of children) {
      nodes.set(c.start, c);
      walk(c, d - 1);
    }
  };
  walk(root, depth);
  return nodes;
}

/** Parses `text` into a lazy tree. Throws a SpillwayError naming the offset on malformed JSON. */
export function parseLazy(text: string, reuse?: ParseReuse): JValue {
  const p = new LazyParser(text, reuse);
  p.ws();
  const value = p.value(0);
  p.ws();
  if (p.pos !== text.length) p.fail('unexpected text after the JSON value');
  return value;
}

class LazyParser {
  pos = 0;
  /** position of the next backslash at or after some earlier point; lets `string()` tell in
   * amortised linear time whether a string contains escapes. */
  private nextBackslash = -2;
  constructor(
    private readonly text: string,
    private readonly reuse?: ParseReuse,
  ) {}

  fail(what: string): never {
    const line = lineOf(this.text, this.pos);
    throw new SpillwayError(`malformed JSON at offset ${this.pos} (line ${line}): ${what}`, 'bad-json');
  }

  ws(): void {
    const t = this.text;
    let i = this.pos;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.pos = i;
  }

  value(depth: number): JValue {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    if (this.reuse && this.pos < this.reuse.upTo) {
      const known = this.reuse.nodes.get(this.pos);
      // strictly before upTo: a number's end depends on the character after it
      if (known && known.end < this.reuse.upTo) {
        this.pos = known.end;
        return known;
      }
    }
    const c = this.text.charCodeAt(this.pos);
    if (c === QUOTE) return this.string();
    if (c === LBRACE) return this.object(depth);
    if (c === LBRACKET) return this.array(depth);
    if (c === 116) return this.literal('true');
    if (c === 102) return this.literal('false');
    if (c === 110) return this.literal('null');
    if (c === 45 || (c >= 48 && c <= 57)) return this.number();
    this.fail(Number.isNaN(c) ? 'unexpected end of input' : `unexpected character ${JSON.stringify(this.text[this.pos])}`);
  }

  string(): JString {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      const q = t.indexOf('"', i);
      if (q < 0) {
        this.pos = t.length;
        this.fail('unterminated string');
      }
      let k = q - 1;
      while (t.charCodeAt(k) === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) {
        i = q;
        break;
      }
      i = q + 1;
    }
    const end = i + 1;
    if (this.nextBackslash !== -1 && this.nextBackslash < start) this.nextBackslash = t.indexOf('\\', start);
    const escaped = this.nextBackslash !== -1 && this.nextBackslash < end;
    this.pos = end;
    return { kind: 'string', start, end, escaped };
  }

  number(): JNumber {
    const t = this.text;
    const start = this.pos;
    let i = start;
    if (t.charCodeAt(i) === 45) i++;
    let digits = 0;
    for (;;) {
      const c = t.charCodeAt(i);
      if ((c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45) {
        i++;
        digits++;
      } else break;
    }
    if (digits === 0) this.fail('a number needs digits');
    this.pos = i;
    return { kind: 'number', start, end: i };
  }

  literal(word: 'true' | 'false' | 'null'): JLiteral {
    if (!this.text.startsWith(word, this.pos)) this.fail(`expected ${word}`);
    const start = this.pos;
    this.pos += word.length;
    return { kind: word, start, end: this.pos };
  }

  array(depth: number): JArray {
    const start = this.pos;
    this.pos++;
    const items: JValue[] = [];
    this.ws();
    if (this.text.charCodeAt(this.pos) === RBRACKET) {
      this.pos++;
      return { kind: 'array', start, end: this.pos, items };
    }
    for (;;) {
      this.ws();
      items.push(this.value(depth + 1));
      this.ws();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === COMMA) continue;
      if (c === RBRACKET) return { kind: 'array', start, end: this.pos, items };
      this.pos--;
      this.fail('expected , or ] in an array');
    }
  }

  object(depth: number): JObject {
    const start = this.pos;
    this.pos++;
    const keys: string[] = [];
    const values: JValue[] = [];
    this.ws();
    if (this.text.charCodeAt(this.pos) === RBRACE) {
      this.pos++;
      return { kind: 'object', start, end: this.pos, keys, values };
    }
    for (;;) {
      this.ws();
      if (this.text.charCodeAt(this.pos) !== QUOTE) this.fail('expected a quoted key');
      keys.push(decodeString(this.text, this.string()));
      this.ws();
      if (this.text.charCodeAt(this.pos) !== COLON) this.fail('expected : after a key');
      this.pos++;
      this.ws();
      values.push(this.value(depth + 1));
      this.ws();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === COMMA) continue;
      if (c === RBRACE) return { kind: 'object', start, end: this.pos, keys, values };
      this.pos--;
      this.fail('expected , or } in an object');
    }
  }
}

function lineOf(text: string, pos: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The decoded value of a string node. */
export function decodeString(text: string, node: JString): string {
  if (!node.escaped) return text.slice(node.start + 1, node.end - 1);
  try {
    return JSON.parse(text.slice(node.start, node.end)) as string;
  } catch (e) {
    throw new SpillwayError(`malformed JSON string at offset ${node.start}: ${(e as Error).message}`, 'bad-json');
  }
}

export function get(obj: JValue | undefined, key: string): JValue | undefined {
  if (!obj || obj.kind !== 'object') return undefined;
  // last occurrence wins, as in JSON.parse
  const i = obj.keys.lastIndexOf(key);
  return i < 0 ? undefined : obj.values[i];
}

export function getString(text: string, obj: JValue | undefined, key: string): string | undefined {
  const v = get(obj, key);
  return v && v.kind === 'string' ? decodeString(text, v) : undefined;
}

/** Materialises a node as a plain JS value (for small nodes: tool inputs, parts). */
export function toValue(text: string, node: JValue): unknown {
  switch (node.kind) {
    case 'string':
      return decodeString(text, node);
    case 'number':
      return Number(text.slice(node.start, node.end));
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
    case 'array':
      return node.items.map((n) => toValue(text, n));
    case 'object': {
      const out: Record<string, unknown> = {};
      node.keys.forEach((k, i) => {
        // an own property, as JSON.parse makes it: assigning "__proto__" would set the prototype
        Object.defineProperty(out, k, { value: toValue(text, node.values[i]!), enumerable: true, writable: true, configurable: true });
      });
      return out;
    }
  }
}

/** A replacement of `text.slice(start, end)`. Patches never overlap. */
export interface Patch {
  start: number;
  end: number;
  text: string;
}

/** Applies non-overlapping patches to `text`; returns `text` itself when there are none. */
export function applyPatches(text: string, patches: readonly Patch[]): string {
  if (patches.length === 0) return text;
  const sorted = [...patches].sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  let at = 0;
  for (const p of sorted) {
    if (p.start < at) throw new SpillwayError(`internal: overlapping patches at offset ${p.start}`, 'internal');
    parts.push(text.slice(at, p.start), p.text);
    at = p.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}
