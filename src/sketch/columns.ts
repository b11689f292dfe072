/**
 * The column mapping of every sketch hotcount keeps (local, shared, in Redis, and the drop-in
 * stores' tables): row i of a key hashed to (h1, h2) uses g_i = h1 + i * h2 (mod 2^32), mapped
 * onto [0, width) by multiply-shift, floor(g_i * width / 2^32). Kirsch & Mitzenmacher ("Less
 * hashing, same performance", ESA 2006) show that two hashes combined this way keep the
 * sketch's guarantees, so one hash per key serves every row. Multiply-shift (Lemire, "A fast
 * alternative to the modulo reduction", 2016) avoids a division and needs no power-of-two width;
 * in doubles it is exact enough: g * width < 2^60 is rounded by at most 2^7 < width when it
 * exceeds 2^53, so the column stays below width. The engine's generator writes the same
 * (tools/engine/rows.mjs); a test finds the hashes where the double's rounding moves a column
 * and checks that both engines move it.
 */

/** 2^-32, to map a 32-bit hash onto [0, width) by multiplication. */
const INV_2_32 = 1 / 4294967296;

/** The cell, row after row, of the key hashed to (h1, h2) in `row` of a sketch `width` wide. */
export function cellOf(h1: number, h2: number, row: number, width: number): number {
  return row * width + ((((h1 + Math.imul(row, h2)) >>> 0) * width * INV_2_32) | 0);
}

/** The key's cell in each of the first `depth` rows, into `out` (returned). */
export function cellsOf(
  h1: number,
  h2: number,
  width: number,
  depth: number,
  out: Int32Array,
): Int32Array {
  for (let row = 0; row < depth; row++) out[row] = cellOf(h1, h2, row, width);
  return out;
}
