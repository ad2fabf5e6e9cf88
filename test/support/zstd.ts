/**
 * zstd frames for tests. Node 20 can decode zstd only through fzstd and cannot encode it at all, so
 * the tests carry what they need:
 *   - `zstdStored(bytes)`: a valid zstd frame whose blocks are stored raw (RFC 8878 §3.1.1.2, block
 *     type 0): any decoder reads it, it is built here in a few lines, and it can hold any body;
 *   - `ZSTD_RESPONSES`: a real compressed frame (Huffman and FSE coded blocks, as Codex sends them),
 *     made once with Node 24's `zlib.zstdCompressSync` from `zstdResponsesBody()`, which rebuilds
 *     the exact request it holds.
 */

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
/** 2^17 window: raw blocks of up to 128 KiB, the most a block may hold */
const WINDOW_DESCRIPTOR = (17 - 10) << 3;
const MAX_BLOCK = 128 * 1024;

export function zstdStored(bytes: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from(MAGIC), Buffer.from([0x00, WINDOW_DESCRIPTOR])];
  let at = 0;
  do {
    const size = Math.min(MAX_BLOCK, bytes.length - at);
    const last = at + size >= bytes.length ? 1 : 0;
    const header = (size << 3) | last; // block type 0 (raw) in bits 1-2
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), bytes.subarray(at, at + size));
    at += size;
  } while (at < bytes.length);
  return Buffer.concat(parts);
}

/** The request `ZSTD_RESPONSES` decodes to: a Responses call with a 1,500-line test log as its tool output. */
export function zstdResponsesBody(): string {
  const lines = Array.from({ length: 1500 }, (_, i) =>
    i === 1480 ? 'FAIL src/parser.test.ts:88 expected 3 got 4 zstd' : `  ok ${i} passes in ${i % 17} ms zstd`,
  ).join('\n');
  return JSON.stringify({
    model: 'gpt-5-codex',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests.' }] },
      { type: 'function_call', call_id: 'call_z', name: 'shell', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_z', output: lines },
    ],
  });
}

export const ZSTD_RESPONSES = Buffer.from(
  'KLUv/WDOs5VbALZpbSFAjdIB3FY+W0HtB8E/MnBSvUt2zmSzm+wmO+omh1VRgAl+AFoAVAANzrIUkyiSRHEUVYkopp7UoAjFMVkghqeYQpFFU4mCYKrxUEAg' +
    'C0YlCgJZMBSN80iMhrKQqChUKuBJD0oLYkhLQzkophKVHFBSNCg1DqMSNUEPpZhCEGdSiUKOxfOgSDGFJA+pIhCYShRJ86hEOaCGwwBYgCRxFFMQ1HAiFRHY' +
    '19bPzs3My8rJyMfGv769vLu6ubi3tq+urayrqqmop6afnp2cm5qZmJeWj479jL7YiomIh4h3Z3d3d3d3d/fv3s28q5qJeNckNNIDsTyRxZbmsTzoeRaSxZbd' +
    'zczMzMzMzMzMu7u7u7u7u7urqqqqqqqqqqqZmZmZmZmZmYmIiIiIiIiIiJp4dnd2dnZod3ZmZvfv38+/r5+Pf2//7t7Ovq6ejn5u/u3dzb2tnR0VhUqlop5q' +
    'K+uqaiqqLslxLLk0UGIgiQNa3JknBaQHpYAJeiYLiQBj8iwGBQMEdmqXdmh3dmZnZ9d2bLd2apd2aHd2Zmdnp3b//////////+/u7u7u7u7u7t3d3d3d3d0B' +
    'i3ioFPy0GSAHJAKCAEMcBAAAYIBAngwUIAAAAAAABECAwJJWQodouyIIkPQcU2OlqfRHXGTaYo2dj5F8a9HdFolk4ZjeKFjcbAQ7lXGo5eIEXcYV65FJnEYi' +
    '0NMlILofcQgSw1A0G9HOXhJjkIgQrW+Veo6YQWLaGdyqqi9PohMkyqPV3ZLMESVIzHYTe6X61ZNogUS59Lqq0DniJBLH7iCJOI/DUQGHq+YNX8UNT8U2XFU2' +
    'XKrU8FUrGr5qMxwVKMOrRmR4ajSGF1FYfMXwjYbhuBHKSUuidiRyKeBTb8URpUjEsLVqt29SSXSJxBLEeGjfOOIUiTG2rOrujVYSOZFYghIf2wuO2EYihHZF' +
    '+b0pSyIrEpWi4FJ+xSNGkYjQq2le5/SSaI1EJQj8yH9Ei4jiQQOOCgacmgv4Kgp4KhJwqyLgqjzAU2OATxUBXt0EcKoIgKc2/7eq5n9b1fpvNapm/LeKaTlj' +
    'xJxEUSQeQ8HH/YQj1iIRpVuTvu6MJdETiaUUcKk38YhSJGLcWrrbN6kkWkZiCSI+tG0ccYrEKFtbdftGNYmcSCxBjI/uBUdsIRFC26L+3qglkRWJSlRwMf8R' +
    'F/W6k9MbANN7cKV3oUnvwY3egYveCRV6Dw56P8TzTmhy3g2leRcGM+9DCfM+lC7vQ6nlfSDxXGS2jDxgJ1EmEscQ8aN9wRFbJELR1qivN7JJZEWiEhpc5K84' +
    'YjQSEbo25euOXhKtSFQigU/5G0esRSJGrSb9nRNLoikkliDiU2/FEaVIxLi1ardvUkl0icQShHjoES0Mhe5EjZMo6D4s0J3wn/uwPndhe+7D8tzB7NyB1bkH' +
    'Huc+FGzuCqG5C8mZO7Agc4eOGA+JjcgXEQsRO0PcE2L/IEKA2PtDiA+7ecg9daiTQ/A4zL0huw0PKlANuTQ0m+FGhvpi+Idh+Qt9XChrYecVlk4KdVAI/gmz' +
    'JmQv4UUFQkJuhGYi3AyhHgj/H2zuQU8HZRzsqcHSwaDOC4K3YLaC7Cl4qIgmyEnQTAQ3ENR74L8DyxvoYaDaAjsTWDoH1GNA8AXMJiD7AA81kAC5AFoD4OZ/' +
    'evz37185/zz3J9NfJ/7iSjOItZ8Ac67fTZTTrzH75ufGBfnhSPL4hV4FgeKnxRSUiV/Yq8DPOcXv85SV++C+0j7xHbMvoKHW9/ct6vP+OH0rmCPwfHJWoLV8' +
    'J05FviagTIwvQb5BI945vFw+ieQzojTL7fgs8lE2TZ2flMqHJN/Zozxwxnch337gM8GvWT40+UIw1GJpfDvyMfdd5HOR8kmTD/cYpC+ODyOfA3M+E4dbPgX5' +
    '2Hx8tXV8fn98+en4MNf4htP4cAH5RnD5+Fn54lD5hkH5+Kx80Kh8J7N8fL18eLl8w4F8cTInoI6PQr7P5aFQf7J8i+QLyFrP1/jm5JvF36LPMcqnJF8Z0wQV' +
    'jq9HPpaL3cWPXj4I+ajcpBD6+GbkMz5LO5V/5bMnn0S9S+bGlyFfWvYpjwrK8gVi5JtofN3A+GLb+Maj8fGR4xPq44tj8nmC8jWp8oHX8s17+TZt+f6qfIyr' +
    'fHWjfHSUj0O+mAxW2I3vh3zsPRd+LqZ82eTjHEblx/hq5OtEzq/mIMtHQD7L+0wqHF8nn3X4ydwPUj438uFXw9D6+CbkG50ac6D/yockH9O4YmXGl0++NquG' +
    'K2P5UHD55kH5+CnyJTo+3x8fbDq+uTW+4mh89sf4hDL5eK18UKl8p6F8/K18+Kl8xlk+rXCU70Y+8m4w1B/fhXzX0+iaqKt8iMmnKrcmhvH15FPtZXE+SMpn' +
    'ST7BLNe9Gl9Mvir6K9w8T/lS8qkgK9Hm+OrI56n4WtnKywchn4obFsGPz0Y+53O4U74tXD6AWb5hXL5dK5/XRL4VjM+/ja9vGh8yOb58H58iPL7WQD46VT5+' +
    'Wr4gL9+8lg8PyvSXT5p8LWULKzm+FvlsCn8KPv/yIeQjcUdB+fHtyOdZKnoXjpVPnnwZbW+BjU+EfLXdcxRXpHxp5APuGgDn8VXke2lcD8q4y8dKvtqKMT4b' +
    'n08+Tf5QvqNQPkYrX9Qp32ksH/8qH34tn/GTz9PxoULj+1rjGx/GxwePT6iNL47I5wnK18TKB34svpgs34d8PlhXkDY+Dfk6ja6JPpLyvcjHX41H8vG5kO86' +
    'Gl7DXpUPkXxWZdPEHN+cfOvdNMoHpXweyRfI9s5H4+vkk4U/lZ1Dlk9KPpWlBKscXyz5pMu3mcp3J8r3rstnPsunnMtHY+XDRuUbAeWbx8jH0fgWy/Hx8PER' +
    '5fGNAePbu8aXT8nHxVh3mW8unwP5bEGVZTs+F/molVLPR8ryIcn37EgePOO7kG8/eBnwV5YPmnwhLKqoNL6PfJx7L9lZZPmkyYd1DOkX48OQz8E6z8nBLR9B' +
    'Pi73GO3s8aV18vGl8iHN8s17+bBz+WJD+eyrfPq0fIZePvAtn2lFviiNb1+Mjx0en/E2PlkanyjjuyKf8zn8qrgqnzryRdqshDe+Cflmt7cpXUj5tJEPXGsA' +
    'DcfnyOfJcjyssS8fjXy6JyF5Nz558pX8zwj+3fLh5BODwpI749uRzz33hY+LlC86+ZjLmXJ8wWV8gz6+XEq+MVQ+9lS+eFC+YVw+PisfNCrfSSgfXysfXirf' +
    '8CRf4+MznsdXEsYXz/h+xedeWPgm8Mm/B+G9qHsP99y312rPk70f15tVz516uum1pYcvela8oVc/T9J5k+ZBmWcuT6q8d/J6yPs0Xoh4PMOTCe918L7Au1L5' +
    'u4nvzL2b8S52d7zutNy1445zu27tms6OlR1s7Fpgx3tduVjXjbYuwjp5dWeq61IHj7rrdH7TcZJOVHR86NiArvk5Ls/xx9q5mnPRzYVoTs7chzm1y6Ut962c' +
    '/+RWQiAjhzZDLo15HBJ33MhrHHZRjItMZ8+4celkGTeOTslOqnOUtu7Zm8zvHLOEypw2x0xqGQa6Nznmoa6ewzDu3vzLJ8fMri2PHDM7W3nE2KJTd9e33uXs' +
    'esWPRl/k6nJx9NrFrefcVn/3/kb6qNfculKxo5vPuba8uV8Rcezpe9HTXr9bvett7q4vouj4aXcpKdevTex61n31v4fuqNf6xdG1Fxva+ax7y8ehNYr13rpp' +
    'fe+12x29d8Lg4WdoTA3drYSA87Ao2XN4KA20bVCC6OEz07opy3Ndfa4w072pyvsvRSJJFEmaEwmpJhK+EslZkkh+RiSSikjShUhICSLhD8keErFD4lOOpOgd' +
    'gJU2KuYBuClQKzcgpoZyMwBWalTMh8L15//37z/E4tf//+HPz7/0/+9f//3r7/Hv36///37/Rw6Htv9+',
  'base64',
);
