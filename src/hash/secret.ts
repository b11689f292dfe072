/**
 * The per-instance secret and everything derived from it.
 *
 * The secret is the only thing that stops an attacker from choosing keys that collide with an
 * innocent key (and so making it look hot). It is 16 random bytes by default; a caller may pass
 * their own (at least 16 bytes) so that sketches can be merged or persisted and reloaded.
 *
 * From one secret we derive, with HMAC-SHA256 and distinct labels (domain separation):
 * - the 64-bit HalfSipHash key used for every key of the sketch,
 * - an 8-byte fingerprint written into serialized sketches, so that loading with the wrong
 *   secret fails with a clear error instead of a checksum mismatch; it reveals nothing useful
 *   about the secret (it is a PRF output),
 * and the secret itself keys the HMAC that authenticates a serialized sketch.
 */
import { createHmac, getRandomValues, timingSafeEqual } from 'node:crypto';
import { rangeError, typeError } from '../errors.js';

/** Bytes of a generated secret, and the fewest a caller may pass. */
export const SECRET_BYTES = 16;

/** Fresh random secret from the platform CSPRNG. */
export function randomSecret(): Uint8Array {
  return getRandomValues(new Uint8Array(SECRET_BYTES));
}

/** Validates a caller's secret and returns a private copy (later changes by the caller do not leak in). */
export function copySecret(secret: unknown, name = 'secret'): Uint8Array {
  if (!(secret instanceof Uint8Array)) throw typeError(name, 'a Uint8Array', secret);
  if (secret.length < SECRET_BYTES) {
    throw rangeError(name, `at least ${SECRET_BYTES} bytes long`, secret);
  }
  return secret.slice();
}

function derive(secret: Uint8Array, label: string): Buffer {
  return createHmac('sha256', secret).update(label).digest();
}

/** The 64-bit HalfSipHash key as two little-endian 32-bit words. */
export function hashKeyWords(secret: Uint8Array): [number, number] {
  const d = derive(secret, 'hotcount/v1/halfsiphash-key');
  return [d.readInt32LE(0), d.readInt32LE(4)];
}

/** 8 bytes that identify a secret without revealing it. */
export function secretFingerprint(secret: Uint8Array): Uint8Array {
  return new Uint8Array(derive(secret, 'hotcount/v1/fingerprint').subarray(0, 8));
}

/** HMAC-SHA256 of `data` keyed with the secret: authenticates serialized sketches. */
export function authenticate(secret: Uint8Array, data: Uint8Array): Uint8Array {
  return new Uint8Array(
    createHmac('sha256', secret).update('hotcount/v1/mac').update(data).digest(),
  );
}

/** Constant-time equality of two byte strings (lengths are not secret). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
