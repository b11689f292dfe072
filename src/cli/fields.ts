/**
 * Picks one field out of a line, in place: the result is a range of the same bytes.
 *
 * Without a delimiter, fields are runs of bytes other than space and tab, as awk splits them
 * (leading blanks ignored). With a delimiter, every occurrence of its bytes separates two fields,
 * as `cut -d` does, so empty fields count.
 */

export class FieldPicker {
  /** Start of the field found by the last successful `pick`. */
  start = 0;
  /** End (exclusive) of that field. */
  end = 0;

  /** `field` counts from 1; `delimiter` empty means blank-separated. */
  constructor(
    private readonly field: number,
    private readonly delimiter: Uint8Array,
  ) {}

  /** Finds the field in bytes[start..end); false if the line has fewer fields. */
  pick(bytes: Uint8Array, start: number, end: number): boolean {
    return this.delimiter.length === 0
      ? this.pickBlank(bytes, start, end)
      : this.pickDelimited(bytes, start, end);
  }

  private pickBlank(bytes: Uint8Array, start: number, end: number): boolean {
    let i = start;
    for (let field = 1; ; field++) {
      while (i < end && (bytes[i] === 32 || bytes[i] === 9)) i++;
      if (i >= end) return false;
      const fieldStart = i;
      while (i < end && bytes[i] !== 32 && bytes[i] !== 9) i++;
      if (field === this.field) {
        this.start = fieldStart;
        this.end = i;
        return true;
      }
    }
  }

  private pickDelimited(bytes: Uint8Array, start: number, end: number): boolean {
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
        return true;
      }
      field++;
      i += size - 1;
      fieldStart = i + 1;
    }
    if (field !== this.field) return false;
    this.start = fieldStart;
    this.end = end;
    return true;
  }
}

function matchesAt(bytes: Uint8Array, at: number, pattern: Uint8Array): boolean {
  for (let j = 1; j < pattern.length; j++) if (bytes[at + j] !== pattern[j]) return false;
  return true;
}
