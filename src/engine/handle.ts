/**
 * Handles: the name a stored output goes by in markers, in `spillway read` and in `spillway:` URIs.
 *
 * A handle is derived from the SHA-256 of the output's UTF-8 bytes, so the same output is stored
 * once however often an agent produces it, and a handle can be checked against its file. 24 hex
 * digits (96 bits) keep markers short while making an accidental collision within one store
 * practically impossible.
 */
import { createHash } from 'node:crypto';

export const HANDLE_PREFIX = 'sw_';
export const HANDLE_HEX_DIGITS = 24;
/** Finds handles inside marker text. */
export const HANDLE_IN_TEXT = new RegExp(`${HANDLE_PREFIX}[0-9a-f]{${HANDLE_HEX_DIGITS}}`);
/** The exact shape of a handle. Anything else (slashes, dots, other lengths) is refused. */
export const HANDLE_PATTERN = new RegExp(`^${HANDLE_IN_TEXT.source}$`);

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function handleFromDigest(sha256: string): string {
  return HANDLE_PREFIX + sha256.slice(0, HANDLE_HEX_DIGITS);
}

export function handleFor(text: string): string {
  return handleFromDigest(sha256Hex(text));
}

export function isHandle(value: string): boolean {
  return HANDLE_PATTERN.test(value);
}
