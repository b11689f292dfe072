/**
 * Splitting files into byte ranges for `hotcount top --threads N`: N runs of about the same
 * number of bytes, across file boundaries, each cut moved forward to the start of a line so that
 * every line is read by exactly one thread, whole.
 *
 * A cut inside a file is moved to just after the first newline at or after the byte before it
 * (so a cut that falls on a line start stays there). Finding it reads forward from the cut, a
 * block at a time, so a cut costs one block read unless a line is longer than a block.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { readError } from './failures.js';

/** Bytes `start` (inclusive) to `end` (exclusive) of `file`. */
export interface Segment {
  file: string;
  start: number;
  end: number;
}

const PROBE_BYTES = 64 * 1024;

/** The offset of the first line start at or after `offset` (0 < offset < size), or `size`. */
function lineStartFrom(fd: number, offset: number, size: number): number {
  const block = Buffer.allocUnsafe(PROBE_BYTES);
  for (let position = offset - 1; position < size; position += PROBE_BYTES) {
    const read = readSync(fd, block, 0, PROBE_BYTES, position);
    if (read === 0) break;
    const newline = block.subarray(0, read).indexOf(10);
    if (newline !== -1) return position + newline + 1;
  }
  return size;
}

/**
 * The files as at most `parts` lists of line-aligned segments, in order; lists that would be
 * empty (more parts than the input has lines) are left out. `sizes` are the files' sizes.
 */
export function splitFiles(files: string[], sizes: number[], parts: number): Segment[][] {
  const total = sizes.reduce((a, b) => a + b, 0);
  const lists: Segment[][] = [];
  let list: Segment[] = [];
  let part = 1;
  let before = 0; // bytes of the files before this one
  for (let f = 0; f < files.length; f++) {
    const file = files[f];
    const size = sizes[f];
    let start = 0;
    // Opening or reading fails as reading the file would: one "cannot read" error, named.
    try {
      const fd = openSync(file, 'r');
      try {
        // Cut where the part's share of all bytes ends, while that lies inside this file.
        while (part < parts) {
          const cut = Math.floor((total * part) / parts) - before;
          if (cut >= size) break;
          const at = cut <= start ? start : lineStartFrom(fd, cut, size);
          if (at > start) list.push({ file, start, end: at });
          if (list.length > 0) lists.push(list);
          list = [];
          start = at;
          part++;
        }
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      throw readError(file, error);
    }
    if (size > start) list.push({ file, start, end: size });
    before += size;
  }
  if (list.length > 0) lists.push(list);
  return lists;
}
