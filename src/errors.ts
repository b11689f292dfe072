/**
 * Error helpers shared by every layer. Messages name the parameter and show the value received,
 * so that a caller can tell which argument was wrong without reading hotcount's source.
 */

/** A short, safe rendering of any value for an error message (never throws, never huge). */
export function describe(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
    case 'undefined':
      return 'undefined';
    case 'boolean':
    case 'symbol':
      return String(value);
    case 'function':
      return 'a function';
    default:
      if (value === null) return 'null';
      if (ArrayBuffer.isView(value)) {
        return `a ${value.constructor.name} of ${value.byteLength} bytes`;
      }
      if (value instanceof ArrayBuffer) return `an ArrayBuffer of ${value.byteLength} bytes`;
      if (typeof SharedArrayBuffer !== 'undefined' && value instanceof SharedArrayBuffer) {
        return `a SharedArrayBuffer of ${value.byteLength} bytes`;
      }
      if (Array.isArray(value)) return `an array of ${value.length} items`;
      return 'an object';
  }
}

/** `name` must be `expected`; for a value of the wrong kind. */
export function typeError(name: string, expected: string, value: unknown): TypeError {
  return new TypeError(`${name} must be ${expected}; received ${describe(value)}`);
}

/** `name` must be `expected`; for a value of the right kind outside its range. */
export function rangeError(name: string, expected: string, value: unknown): RangeError {
  return new RangeError(`${name} must be ${expected}; received ${describe(value)}`);
}

/** Validates an integer option in [min, max]: TypeError if not a number, RangeError otherwise. */
export function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number') throw typeError(name, 'a number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw rangeError(name, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

/**
 * Refuses option names that `known` does not list: a misspelt option (`widht`) would otherwise
 * be ignored and the default used without a word. Suggests the closest known name.
 */
export function checkOptionNames(name: string, options: object, known: readonly string[]): void {
  for (const option of Object.keys(options)) {
    if (known.includes(option)) continue;
    const closest = closestName(option, known);
    throw new TypeError(
      `${name}.${option} is not an option${closest === undefined ? '' : ` (did you mean ${closest}?)`}; ` +
        `the options are ${known.join(', ')}`,
    );
  }
}

/** The known name within two edits of `name` (Levenshtein distance), if there is one. */
function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase(), bestDistance);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, or `limit` when it is at least that (names are short; no allocation worth avoiding). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit || a.length > 64 || b.length > 64) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return Math.min(previous[b.length], limit);
}
