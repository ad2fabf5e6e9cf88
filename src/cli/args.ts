/**
 * A small, strict command-line parser. Every flag is declared with its kind, so an unknown flag,
 * a missing value or a value of the wrong shape is a one-line error that names the flag, never a
 * silently ignored option.
 */
import { SpillwayError } from '../engine/types';

type FlagKind = 'string' | 'int' | 'bool';
export interface FlagSpec {
  kind: FlagKind;
  min?: number;
}

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | number | boolean>;
}

export function parseArgs(argv: readonly string[], spec: Record<string, FlagSpec>, command: string): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | number | boolean>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const f = spec[name];
    if (!f) {
      const known = Object.keys(spec)
        .map((k) => `--${k}`)
        .join(', ');
      throw new SpillwayError(`${command}: unknown flag --${name} (known: ${known})`, 'usage');
    }
    if (flags.has(name)) throw new SpillwayError(`${command}: --${name} given twice`, 'usage');
    if (f.kind === 'bool') {
      if (eq >= 0) throw new SpillwayError(`${command}: --${name} takes no value`, 'usage');
      flags.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      if (value === undefined || (value.startsWith('--') && value.length > 2))
        throw new SpillwayError(`${command}: --${name} needs a value`, 'usage');
      i++;
    }
    if (f.kind === 'int') {
      if (!/^-?\d+$/.test(value))
        throw new SpillwayError(`${command}: --${name} must be a whole number, got ${JSON.stringify(value)}`, 'usage');
      const n = Number(value);
      if (f.min !== undefined && n < f.min) throw new SpillwayError(`${command}: --${name} must be at least ${f.min}, got ${n}`, 'usage');
      flags.set(name, n);
    } else flags.set(name, value);
  }
  return { positional, flags };
}

export function str(a: ParsedArgs, name: string): string | undefined {
  const v = a.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

export function int(a: ParsedArgs, name: string): number | undefined {
  const v = a.flags.get(name);
  return typeof v === 'number' ? v : undefined;
}
