/**
 * Rendering `hotcount top` results: a terminal table or JSON, as a sequence of chunks so that a
 * million rows are written a batch at a time, never built into one string.
 *
 * Keys come from untrusted input (logs): the table shows them escaped (escape.ts) and cut to
 * `keyWidth` characters; JSON carries the key exactly when it is valid UTF-8, and its bytes in
 * hex otherwise.
 */
import type { HeavyHitter } from '../core.js';
import { CUT_MARK, displayKey, keyText } from './escape.js';

/** Why lines were not counted; each is a count of lines. */
export interface Skipped {
  /** Empty lines (after a trailing CR is stripped). */
  emptyLines: number;
  /** Lines whose field N is empty or missing (the empty key is never counted). */
  noField: number;
  /** Lines without the delimiter, with --only-delimited. */
  noDelimiter: number;
}

export interface Summary {
  rows: HeavyHitter[];
  /** Lines counted (the total the shares are of). */
  total: number;
  skipped: Skipped;
  sketchBytes: number;
  width: number;
  depth: number;
  errorBound: number;
  seconds: number;
}

/** Rows rendered per chunk. */
const BATCH_ROWS = 2048;

const number = new Intl.NumberFormat('en-US');

/** Adds `more` into `into`, reason by reason; returns `into`. */
export function addSkipped(into: Skipped, more: Skipped): Skipped {
  into.emptyLines += more.emptyLines;
  into.noField += more.noField;
  into.noDelimiter += more.noDelimiter;
  return into;
}

export function skippedTotal(skipped: Skipped): number {
  return skipped.emptyLines + skipped.noField + skipped.noDelimiter;
}

function share(count: number, total: number): string {
  return total > 0 ? `${((100 * count) / total).toFixed(2)}%` : '-';
}

/** The true count lies in [lowerBound, count]: "exact" when they meet, else its lower end. */
function trueCount(row: HeavyHitter): string {
  return row.lowerBound === row.upperBound ? 'exact' : `≥ ${number.format(row.lowerBound)}`;
}

/** The table, in chunks. `keyWidth`: characters a key may take before it is cut (0: never). */
export function* renderTable(summary: Summary, keyWidth: number): Generator<string> {
  const header = ['rank', 'key', 'count', 'true count', 'share'];
  const keys = summary.rows.map((row) => displayKey(row.key as Uint8Array, keyWidth));
  const widths = header.map((title) => title.length);
  summary.rows.forEach((row, i) => {
    widths[0] = Math.max(widths[0], String(i + 1).length);
    widths[1] = Math.max(widths[1], [...keys[i].text].length);
    widths[2] = Math.max(widths[2], number.format(row.count).length);
    widths[3] = Math.max(widths[3], trueCount(row).length);
  });
  const align = (cells: string[]) =>
    cells
      .map((cell, c) =>
        c === 1
          ? cell + ' '.repeat(Math.max(0, widths[1] - [...cell].length))
          : cell.padStart(widths[c]),
      )
      .join('  ')
      .trimEnd();
  let chunk = `${align(header)}\n`;
  for (let i = 0; i < summary.rows.length; i++) {
    const row = summary.rows[i];
    chunk += `${align([
      String(i + 1),
      keys[i].text,
      number.format(row.count),
      trueCount(row),
      share(row.count, summary.total),
    ])}\n`;
    if ((i + 1) % BATCH_ROWS === 0) {
      yield chunk;
      chunk = '';
    }
  }
  const skipped = summary.skipped;
  const reasons = [
    skipped.emptyLines > 0 ? `${number.format(skipped.emptyLines)} empty` : '',
    skipped.noField > 0 ? `${number.format(skipped.noField)} with the field empty or missing` : '',
    skipped.noDelimiter > 0 ? `${number.format(skipped.noDelimiter)} without the delimiter` : '',
  ].filter((reason) => reason !== '');
  const lines = [
    '',
    `${number.format(summary.total)} lines counted` +
      (reasons.length > 0 ? `; skipped: ${reasons.join(', ')}` : '') +
      '.',
    'count is an upper bound: the true count is at most count, and at least what "true count"',
    'says ("exact" when the two meet).',
  ];
  if (keys.some((key) => key.cut)) {
    lines.push(
      `Keys longer than ${keyWidth} characters are cut and end in ${CUT_MARK} ` +
        '(--key-width 0 or --json shows them whole).',
    );
  }
  lines.push(
    `Sketch: ${summary.width} x ${summary.depth} counters, ${formatBytes(summary.sketchBytes)}; ` +
      `keys outside the table are within +${number.format(Math.ceil(summary.errorBound))} ` +
      `with probability ${(100 * (1 - Math.exp(-summary.depth))).toFixed(1)}%.`,
  );
  yield `${chunk}${lines.join('\n')}\n`;
}

/** One row of `top` in JSON: the key exactly, or its bytes in hex when it is not UTF-8. */
function jsonRow(row: HeavyHitter, rank: number, total: number): object {
  const bytes = row.key as Uint8Array;
  const text = keyText(bytes);
  return {
    rank,
    ...(text === undefined
      ? { key: displayKey(bytes, 0).text, keyHex: Buffer.from(bytes).toString('hex') }
      : { key: text }),
    count: row.count,
    lowerBound: row.lowerBound,
    upperBound: row.upperBound,
    share: total > 0 ? row.count / total : 0,
  };
}

/**
 * JSON, in chunks: the summary's fields indented, then `top`, one row per line. `extra` fields
 * (the demo's) come last.
 */
export function* renderJson(summary: Summary, extra: object = {}): Generator<string> {
  const head = {
    total: summary.total,
    skipped: skippedTotal(summary.skipped),
    skippedBy: summary.skipped,
    seconds: summary.seconds,
    sketch: {
      width: summary.width,
      depth: summary.depth,
      memoryBytes: summary.sketchBytes,
      errorBound: summary.errorBound,
    },
  };
  const indented = JSON.stringify(head, null, 2);
  let chunk = `${indented.slice(0, -2)},\n  "top": [`;
  const rows = summary.rows;
  for (let i = 0; i < rows.length; i++) {
    chunk += `${i === 0 ? '' : ','}\n    ${JSON.stringify(jsonRow(rows[i], i + 1, summary.total))}`;
    if ((i + 1) % BATCH_ROWS === 0) {
      yield chunk;
      chunk = '';
    }
  }
  chunk += rows.length > 0 ? '\n  ]' : ']';
  for (const [name, value] of Object.entries(extra)) {
    chunk += `,\n  ${JSON.stringify(name)}: ${JSON.stringify(value, null, 2).replaceAll('\n', '\n  ')}`;
  }
  yield `${chunk}\n}\n`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
