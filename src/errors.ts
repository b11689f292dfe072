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
