/**
 * Picks one field out of a line, in place: the result is a range of the same bytes.
 *
 * Without a delimiter, fields are runs of bytes other than space and tab, as awk splits them
 * (leading blanks ignored). With a delimiter, fields are what `cut -d D -f N` selects: every
 * occurrence of D's bytes separates two fields, so fields can be empty, and a line that holds no
 * D at all is its own field N (cut prints such a line whole) unless `onlyDelimited` (cut's
 * `-s`), which skips it. A line with fewer fields has no field N; `hotcount top` skips it, and
 * an empty field too, where cut would print an empty line (the empty key is never counted).
 */

/** `pick` found field N (it may be empty: check `end > start`). */
export const FIELD = 0;
/** The line has fewer than N fields. */
export const NO_FIELD = 1;
/** The line holds no delimiter and `onlyDelimited` is set. */
export const NO_DELIMITER = 2;

export type PickResult = typeof FIELD | typeof NO_FIELD | typeof NO_DELIMITER;

export class FieldPicker {
  /** Start of the field found by the last `pick` that returned FIELD. */
  start = 0;
  /** End (exclusive) of that field. */
  end = 0;

  /** `field` counts from 1; `delimiter` empty means blank-separated. */
  constructor(
    private readonly field: number,
    private readonly delimiter: Uint8Array,
    private readonly onlyDelimited = false,
  ) {}

  /** Finds the field in bytes[start..end). */
  pick(bytes: Uint8Array, start: number, end: number): PickResult {
    return this.delimiter.length === 0
      ? this.pickBlank(bytes, start, end)
      : this.pickDelimited(bytes, start, end);
  }

  private pickBlank(bytes: Uint8Array, start: number, end: number): PickResult {
    let i = start;
    for (let field = 1; ; field++) {
      while (i < end && (bytes[i] === 32 || bytes[i] === 9)) i++;
      if (i >= end) return NO_FIELD;
      const fieldStart = i;
      while (i < end && bytes[i] !== 32 && bytes[i] !== 9) i++;
      if (field === this.field) {
        this.start = fieldStart;
        this.end = i;
        return FIELD;
      }
    }
  }

  private pickDelimited(bytes: Uint8Array, start: number, end: number): PickResult {
    const delimiter = this.delimiter;
    const first = delimiter[0];
    const size = delimiter.length;
    let field = 1;
    let fieldStart = start;
    for (let i = start; i <= end - size; i++) {
      if (bytes[i] !== first || !matchesAt(bytes, i, delimiter)) continue;
      if (field === this.field) {
        this.start = fieldStart;
        this.end = i;
        return FIELD;
      }
      field++;
      i += size - 1;
      fieldStart = i + 1;
    }
    if (field === 1) {
      // No delimiter in the line: cut prints it whole, or skips it with -s.
      if (this.onlyDelimited) return NO_DELIMITER;
      this.start = start;
      this.end = end;
      return FIELD;
    }
    if (field !== this.field) return NO_FIELD;
    this.start = fieldStart;
    this.end = end;
    return FIELD;
  }
}

function matchesAt(bytes: Uint8Array, at: number, pattern: Uint8Array): boolean {
  for (let j = 1; j < pattern.length; j++) if (bytes[at + j] !== pattern[j]) return false;
  return true;
}
