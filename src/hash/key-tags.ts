/**
 * The key tags: one number per kind of key, folded into HalfSipHash's initial state (see
 * key-hasher.ts), so that the number 1, the bigint 1n, the string "1" and the bytes [0x31] are
 * four different keys. Byte keys use tag 0, which makes them plain HalfSipHash-1-3.
 *
 * The WebAssembly engine hashes numbers and bytes under the same tags, and its generator
 * (tools/engine/layout.mjs) reads them from this file before TypeScript is compiled: by
 * transpiling it alone. So this file imports nothing; the generator refuses it if it does.
 */

/** A Uint8Array's bytes (and, with a tag of their own, an AddressKey's; see address-key.ts). */
export const TAG_BYTES = 0;
/** A string's UTF-16 code units. */
export const TAG_STRING = 0x7300;
/** A number that is a 32-bit integer, as its two's complement sign-extended to 8 bytes. */
export const TAG_INT32 = 0x6900;
/** Any other finite number, as the 8 bytes of its IEEE-754 double. */
export const TAG_FLOAT = 0x6600;
/** A bigint, as the string of its hexadecimal digits. */
export const TAG_BIGINT = 0x6200;
