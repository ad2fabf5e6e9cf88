/**
 * Images in a request, counted as the providers bill them: by width and height, not by the length of
 * their base64 encoding (a 70 KB screenshot is some 56,000 tokens as text and about 600 as pixels).
 * The engine counts each image block so (results.ts), so its sizes, its ledger and its clears see
 * what the provider sees; the replay's meter prices each block under each provider's own rule.
 *
 * Image sizes come from the first bytes of base64 data. Only the header bytes are decoded: a
 * PNG's IHDR, a GIF's screen descriptor, a WebP's VP8/VP8L/VP8X header, a JPEG's segments up to its
 * SOF marker (jumping over the others by their lengths). Anything else, or a truncated or
 * malformed header, gives undefined.
 */

export interface ImageSize {
  width: number;
  height: number;
}

/** JPEG segments walked before giving up (a real file reaches its SOF within a few dozen). */
const MAX_JPEG_SEGMENTS = 512;

/** Bytes [start, start + length) of the data `b64` encodes, decoding only the groups that hold them. */
function bytesAt(b64: string, start: number, length: number): Uint8Array | undefined {
  const from = Math.floor(start / 3) * 4;
  const to = Math.ceil((start + length) / 3) * 4;
  if (to > b64.length + 3) return undefined;
  const buf = Buffer.from(b64.slice(from, to), 'base64');
  const off = start - (from / 4) * 3;
  if (buf.length < off + length) return undefined;
  return buf.subarray(off, off + length);
}

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;

function ok(width: number, height: number): ImageSize | undefined {
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Width and height of a PNG, GIF, WebP or JPEG given as base64 (without a data: prefix). */
export function imageSize(b64: string): ImageSize | undefined {
  let len = b64.length;
  while (len > 0 && b64[len - 1] === '=') len--;
  const available = Math.floor((len * 3) / 4);
  if (available < 10) return undefined;
  const head = bytesAt(b64, 0, Math.min(30, available));
  if (!head) return undefined;
  if (head.length < 30 && !(head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46)) return undefined; // only a GIF header is shorter
  // PNG: signature, then the IHDR chunk: width and height as big-endian 32-bit at bytes 16 and 20
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return ok(u32be(head, 16), u32be(head, 20));
  // GIF87a / GIF89a: logical screen width and height, little-endian 16-bit at bytes 6 and 8
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46) return ok(u16le(head, 6), u16le(head, 8));
  // WebP: RIFF....WEBP then a VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk
  if (head[0] === 0x52 && head[1] === 0x49 && head[8] === 0x57 && head[9] === 0x45 && head[10] === 0x42 && head[11] === 0x50) {
    const chunk = String.fromCharCode(head[12]!, head[13]!, head[14]!, head[15]!);
    if (chunk === 'VP8 ') return ok(u16le(head, 26) & 0x3fff, u16le(head, 28) & 0x3fff);
    if (chunk === 'VP8L') {
      const b = head;
      return ok(1 + (((b[22]! & 0x3f) << 8) | b[21]!), 1 + (((b[24]! & 0x0f) << 10) | (b[23]! << 2) | ((b[22]! & 0xc0) >> 6)));
    }
    if (chunk === 'VP8X') return ok(1 + u24le(head, 24), 1 + u24le(head, 27));
    return undefined;
  }
  // JPEG: SOI, then segments (FF marker, 16-bit length) until a start-of-frame marker
  if (head[0] === 0xff && head[1] === 0xd8) {
    let at = 2;
    for (let n = 0; n < MAX_JPEG_SEGMENTS; n++) {
      const seg = bytesAt(b64, at, 9);
      if (!seg || seg[0] !== 0xff) return undefined;
      const marker = seg[1]!;
      if (marker === 0xff) {
        at += 1;
        continue;
      } // fill byte
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        at += 2;
        continue;
      }
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isSof) return ok(u16be(seg, 7), u16be(seg, 5));
      if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan before any frame header
      at += 2 + u16be(seg, 2);
    }
  }
  return undefined;
}

/** The base64 payload of a `data:` URL, or undefined for any other URL. */
export function dataUrlBase64(url: string): string | undefined {
  const m = /^data:[^;,]*;base64,/i.exec(url.slice(0, 100));
  return m ? url.slice(m[0].length) : undefined;
}

/** Image tokens when the size is unknown (a URL, an undecodable header): Anthropic's cap before resizing. */
const ANTHROPIC_UNKNOWN_IMAGE_TOKENS = 1600;
/** OpenAI, size unknown: a 1024 × 1024 image at high detail (4 tiles). */
const OPENAI_UNKNOWN_IMAGE_TOKENS = 85 + 170 * 4;

/**
 * Anthropic: an image whose long edge is over 1,568 px, or that would cost over about 1,600 tokens,
 * is scaled down first; then tokens = width × height / 750.
 */
export function anthropicImageTokens(size: ImageSize | undefined): number {
  if (!size) return ANTHROPIC_UNKNOWN_IMAGE_TOKENS;
  const s = Math.min(1, 1568 / Math.max(size.width, size.height));
  const w = Math.round(size.width * s),
    h = Math.round(size.height * s);
  return Math.min(ANTHROPIC_UNKNOWN_IMAGE_TOKENS, Math.ceil((w * h) / 750));
}

/**
 * OpenAI gpt-4o class, detail high or auto: fit in 2048 × 2048, scale the short side down to 768,
 * then 170 tokens per 512 px tile plus 85; detail low is 85.
 */
export function openaiImageTokens(size: ImageSize | undefined, detail?: string): number {
  if (detail === 'low') return 85;
  if (!size) return OPENAI_UNKNOWN_IMAGE_TOKENS;
  let w = size.width,
    h = size.height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w = Math.round(w * short);
  h = Math.round(h * short);
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** The block types that carry an image: Anthropic's `image`, Chat Completions' `image_url`, Responses' `input_image`. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(['image', 'image_url', 'input_image']);

/**
 * What the engine counts for one image block: the dearer of the two providers' rules, so a decision
 * that rewrites an image after it (a clear) is never priced below what any provider bills for it.
 */
export function imageTokens(size: ImageSize | undefined, detail?: string): number {
  return Math.max(anthropicImageTokens(size), openaiImageTokens(size, detail));
}

/**
 * The size and detail of an image block given as a parsed value (Anthropic `source.data`, an
 * `image_url` data URL or `{ url, detail }`, a block's `detail`): what `imageTokens` prices. The
 * engine reads the same fields from the request text (stages/results.ts); the replay's meter and the
 * benchmark's shaper read them here, so every count of an image agrees.
 */
export function imageOfBlock(b: Record<string, unknown>): { size?: ImageSize; detail?: string } {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  let b64: string | undefined;
  let detail: string | undefined;
  if (isObj(b.source) && typeof b.source.data === 'string') b64 = b.source.data;
  const url = isObj(b.image_url) ? b.image_url.url : b.image_url;
  if (typeof url === 'string') b64 = dataUrlBase64(url);
  if (isObj(b.image_url) && typeof b.image_url.detail === 'string') detail = b.image_url.detail;
  if (typeof b.detail === 'string') detail = b.detail;
  const size = b64 ? imageSize(b64) : undefined;
  return { ...(size ? { size } : {}), ...(detail ? { detail } : {}) };
}
