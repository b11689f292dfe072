/**
 * The seam over valkey-glide 2 (`GlideClient`, `GlideClusterClient`), through raw commands
 * (raw-seam.ts): `customCommand`, which a cluster client routes by the command's first key.
 * glide's own `Script` objects would do as much, but they are the user's copy of glide's classes,
 * not hotcount's. Each call names its decoder, whatever the client's default.
 */
import type { GlideClient, RedisSeam } from './client.js';
import { RawSeam } from './raw-seam.js';

/** glide's `Decoder`: Bytes is 0, String 1. */
const AS_BYTES = { decoder: 0 };
const AS_STRINGS = { decoder: 1 };

export function glideSeam(client: GlideClient): RedisSeam {
  return new RawSeam((_firstKey, command, bytes) =>
    client.customCommand(command, bytes ? AS_BYTES : AS_STRINGS),
  );
}
