/**
 * The binary format of a sketch, version 1. All integers little-endian.
 *
 *   offset  size      field
 *   0       4         magic "HCMS"
 *   4       2         version (1); a new hash function or layout is a new version
 *   6       2         flags: bit 0 conservative, bit 1 saturated; other bits must be 0
 *   8       4         width (u32)
 *   12      4         depth (u32)
 *   16      8         fingerprint of the secret (HMAC-derived; never the secret)
 *   24      8         total (i64, |total| <= 2^53 - 1)
 *   32      4*w*d     counters (i32, row after row), each in [-(2^31 - 1), 2^31 - 1]
 *   32+4wd  32        HMAC-SHA256 keyed with the secret over every byte before it
 *
 * The MAC means a blob altered or forged without the secret is rejected. Decoding validates
 * every length before anything is allocated, so a hostile blob costs at most its own size.
 */
import { rangeError, typeError } from '../errors.js';
import { authenticate, sameBytes } from '../hash/secret.js';
import { SATURATED } from './counters.js';
import { MAX_COUNTERS } from './dimensions.js';

/** The version of the binary format `toBytes` writes (docs/sketch.md, "Binary format"). */
export const FORMAT_VERSION = 1;
const MAGIC = 0x534d4348; // "HCMS" read as a little-endian u32
const HEADER_BYTES = 32;
const MAC_BYTES = 32;
const FLAG_CONSERVATIVE = 1;
const FLAG_SATURATED = 2;

export interface SketchHeader {
  width: number;
  depth: number;
  conservative: boolean;
  saturated: boolean;
  total: number;
  fingerprint: Uint8Array;
}

export function encodeSketch(
  header: SketchHeader,
  cells: Int32Array,
  secret: Uint8Array,
): Uint8Array {
  const bodyBytes = HEADER_BYTES + cells.length * 4;
  const out = new Uint8Array(bodyBytes + MAC_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint16(4, FORMAT_VERSION, true);
  view.setUint16(
    6,
    (header.conservative ? FLAG_CONSERVATIVE : 0) | (header.saturated ? FLAG_SATURATED : 0),
    true,
  );
  view.setUint32(8, header.width, true);
  view.setUint32(12, header.depth, true);
  out.set(header.fingerprint, 16);
  view.setBigInt64(24, BigInt(header.total), true);
  for (let i = 0, p = HEADER_BYTES; i < cells.length; i++, p += 4) view.setInt32(p, cells[i], true);
  out.set(authenticate(secret, out.subarray(0, bodyBytes)), bodyBytes);
  return out;
}

function malformed(what: string): RangeError {
  return new RangeError(`bytes is not a valid hotcount sketch: ${what}`);
}

/**
 * Validates a blob completely (length, magic, version, flags, dimensions, secret, MAC, values)
 * and returns its header; the counters are then read by `readCells`.
 */
export function decodeSketch(
  bytes: unknown,
  secret: Uint8Array,
  fingerprint: Uint8Array,
): SketchHeader {
  if (!(bytes instanceof Uint8Array)) throw typeError('bytes', 'a Uint8Array', bytes);
  if (bytes.length < HEADER_BYTES + MAC_BYTES) {
    throw malformed(`${bytes.length} bytes is shorter than the smallest sketch`);
  }
  // A Buffer slice may start at any offset: DataView reads unaligned.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw malformed('wrong magic number');
  const version = view.getUint16(4, true);
  if (version !== FORMAT_VERSION) {
    throw rangeError('bytes', `a sketch of format version ${FORMAT_VERSION}`, `version ${version}`);
  }
  const flags = view.getUint16(6, true);
  if ((flags & ~(FLAG_CONSERVATIVE | FLAG_SATURATED)) !== 0) throw malformed('unknown flags');
  const width = view.getUint32(8, true);
  const depth = view.getUint32(12, true);
  if (width < 1 || depth < 1 || width * depth > MAX_COUNTERS) {
    throw malformed(`impossible dimensions ${width} x ${depth}`);
  }
  const bodyBytes = HEADER_BYTES + width * depth * 4;
  if (bytes.length !== bodyBytes + MAC_BYTES) {
    throw malformed(
      `${bytes.length} bytes where ${width} x ${depth} needs ${bodyBytes + MAC_BYTES}`,
    );
  }
  if (!sameBytes(bytes.subarray(16, 24), fingerprint)) {
    throw new RangeError('secret does not match the secret this sketch was written with');
  }
  const mac = authenticate(secret, bytes.subarray(0, bodyBytes));
  if (!sameBytes(mac, bytes.subarray(bodyBytes))) {
    throw malformed('checksum mismatch (altered, truncated or forged)');
  }
  // The MAC makes what follows hold for every blob we wrote; still checked, cheaply.
  const total = view.getBigInt64(24, true);
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || total < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw malformed('total out of range');
  }
  for (let p = HEADER_BYTES; p < bodyBytes; p += 4) {
    if (view.getInt32(p, true) < -SATURATED) throw malformed('counter out of range');
  }
  return {
    width,
    depth,
    conservative: (flags & FLAG_CONSERVATIVE) !== 0,
    saturated: (flags & FLAG_SATURATED) !== 0,
    total: Number(total),
    fingerprint: bytes.slice(16, 24),
  };
}

/** Copies the counters of a blob validated by `decodeSketch` into `cells`. */
export function readCells(bytes: Uint8Array, cells: Int32Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0, p = HEADER_BYTES; i < cells.length; i++, p += 4)
    cells[i] = view.getInt32(p, true);
}
