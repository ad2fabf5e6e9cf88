/**
 * A setting's JSON schema in package.json, derived from the zod schema that validates it.
 *
 * Bounds, enums, types and item schemas are written once, in zod (the engine's CONFIG_KEYS, the
 * extension's own keys), and this turns `z.toJSONSchema`'s output into the dialect VS Code's
 * Settings UI and settings.json validation read. So the minimum the Settings UI shows is the
 * minimum the engine accepts: they cannot drift (test/unit/extension-contributes.test.ts).
 *
 * The one rewrite: a zod union of an integer range and a string literal (`1..1e9 | "unlimited"`)
 * becomes `type: ["integer", "string"]` with the range and a `pattern` for the literal, the shape
 * the Settings UI edits inline (it offers no editor for `anyOf`).
 */
import { z } from 'zod';
import { escapeRe } from '../../engine/config';
import { formatInt } from '../../engine/format-number';

type Json = Record<string, unknown>;

/** Thousands separators for bounds in messages (`1,000,000,000`). */
const grouped = (n: unknown) => (typeof n === 'number' ? formatInt(n) : String(n));

/** `anyOf: [{ type: integer, minimum, maximum }, { const: "x" }, ...]` → VS Code's mixed type. */
function integerOrLiterals(anyOf: Json[]): Json | undefined {
  const ints = anyOf.filter((s) => s.type === 'integer');
  const literals = anyOf.filter((s) => s.type === 'string' && typeof s.const === 'string').map((s) => s.const as string);
  if (ints.length !== 1 || literals.length === 0 || ints.length + literals.length !== anyOf.length) return undefined;
  const { type: _type, ...range } = ints[0]!;
  const words = literals.map((l) => JSON.stringify(l)).join(' or ');
  const bounds =
    range.minimum !== undefined && range.maximum !== undefined
      ? ` from ${grouped(range.minimum)} to ${grouped(range.maximum)}`
      : range.minimum !== undefined
        ? ` of at least ${grouped(range.minimum)}`
        : '';
  return {
    type: ['integer', 'string'],
    ...range,
    pattern: literals.length === 1 ? `^${escapeRe(literals[0]!)}$` : `^(${literals.map(escapeRe).join('|')})$`,
    patternErrorMessage: `a whole number${bounds}, or ${words}`,
  };
}

function toVsCode(schema: Json): Json {
  const out: Json = { ...schema };
  delete out.$schema;
  if (Array.isArray(out.anyOf)) {
    const mixed = integerOrLiterals(out.anyOf as Json[]);
    if (mixed) {
      delete out.anyOf;
      Object.assign(out, mixed);
    } else out.anyOf = (out.anyOf as Json[]).map(toVsCode);
  }
  if (out.items && typeof out.items === 'object') out.items = toVsCode(out.items as Json);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') {
    out.additionalProperties = toVsCode(out.additionalProperties as Json);
  }
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, Json>).map(([k, v]) => [k, toVsCode(v)]));
  }
  return out;
}

/**
 * The JSON schema of one setting as package.json declares it: `type`, bounds, `enum`, `items`,
 * `additionalProperties`, from its zod schema. Descriptions and defaults are added by the caller.
 */
export function settingJsonSchema(schema: z.ZodType): Json {
  return toVsCode(z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Json);
}
