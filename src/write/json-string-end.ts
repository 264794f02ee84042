const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The index of the quote that closes the JSON string opened at `open` in `bytes` (the next quote
 * not escaped by a backslash), -1 when the bytes end first. A loop over the bytes, not a native
 * search: most strings of a `_bulk` answer are a few characters long.
 */
export function closingQuote(bytes: Buffer, open: number): number {
  let at = open + 1;
  while (at < bytes.length) {
    const byte = bytes[at];
    if (byte === QUOTE) return at;
    at += byte === BACKSLASH ? 2 : 1;
  }
  return -1;
}
