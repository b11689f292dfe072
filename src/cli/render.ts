/**
 * Rendering `hotcount top` results: a terminal table or JSON.
 *
 * Keys come from untrusted input (logs): in the table, control characters and invalid UTF-8
 * are escaped (\t, \x1b, \xff) so that a log line cannot move the cursor or recolour the
 * terminal, and long keys are shortened. JSON carries the key exactly when it is valid UTF-8,
 * and its bytes in hex otherwise.
 */
import type { HeavyHitter } from '../limits/heavy-hitters.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_KEY_CHARS = 60;

/** The key as text, or undefined if its bytes are not valid UTF-8. */
export function keyText(key: Uint8Array): string | undefined {
  try {
    return utf8.decode(key);
  } catch {
    return undefined;
  }
}

function hex(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`;
}

/** A safe one-line rendering for the terminal. */
export function displayKey(key: Uint8Array): string {
  const text = keyText(key);
  let out = '';
  if (text === undefined) {
    for (const byte of key)
      out += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : hex(byte);
  } else {
    for (const char of text) {
      const code = char.codePointAt(0) as number;
      if (code === 9) out += '\\t';
      else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += hex(code);
      else out += char;
    }
  }
  return out.length > MAX_KEY_CHARS ? `${out.slice(0, MAX_KEY_CHARS - 1)}…` : out;
}

const number = new Intl.NumberFormat('en-US');

export interface Summary {
  rows: HeavyHitter[];
  /** Lines counted (the total the shares are of). */
  total: number;
  /** Lines skipped: empty, or without the requested field. */
  skipped: number;
  sketchBytes: number;
  width: number;
  depth: number;
  errorBound: number;
  seconds: number;
}

function share(count: number, total: number): string {
  return total > 0 ? `${((100 * count) / total).toFixed(2)}%` : '-';
}

export function renderTable(summary: Summary): string {
  const header = ['rank', 'key', 'count', '± bound', 'share'];
  const lines = summary.rows.map((row, i) => {
    const bound = row.upperBound - row.lowerBound;
    return [
      String(i + 1),
      displayKey(row.key as Uint8Array),
      number.format(row.count),
      bound === 0 ? 'exact' : `-${number.format(bound)}`,
      share(row.count, summary.total),
    ];
  });
  const widths = header.map((title, c) => Math.max(title.length, ...lines.map((l) => l[c].length)));
  const align = (cells: string[]) =>
    cells
      .map((cell, c) => (c === 1 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd();
  const out = [align(header), ...lines.map(align)];
  out.push(
    '',
    `${number.format(summary.total)} lines counted` +
      (summary.skipped > 0
        ? `, ${number.format(summary.skipped)} skipped (empty or no such field)`
        : '') +
      ` in ${summary.seconds.toFixed(2)} s.`,
    `count is an upper bound; the true count lies in [count - bound, count].`,
    `Sketch: ${summary.width} x ${summary.depth} counters, ${formatBytes(summary.sketchBytes)}; ` +
      `keys outside the table are within +${number.format(Math.ceil(summary.errorBound))} ` +
      `with probability ${(100 * (1 - Math.exp(-summary.depth))).toFixed(1)}%.`,
  );
  return `${out.join('\n')}\n`;
}

export function renderJson(summary: Summary, extra: object = {}): string {
  const top = summary.rows.map((row, i) => {
    const bytes = row.key as Uint8Array;
    const text = keyText(bytes);
    return {
      rank: i + 1,
      key: text ?? displayKey(bytes),
      ...(text === undefined ? { keyHex: Buffer.from(bytes).toString('hex') } : {}),
      count: row.count,
      lowerBound: row.lowerBound,
      upperBound: row.upperBound,
      share: summary.total > 0 ? row.count / summary.total : 0,
    };
  });
  return `${JSON.stringify(
    {
      total: summary.total,
      skipped: summary.skipped,
      seconds: summary.seconds,
      sketch: {
        width: summary.width,
        depth: summary.depth,
        memoryBytes: summary.sketchBytes,
        errorBound: summary.errorBound,
      },
      top,
      ...extra,
    },
    null,
    2,
  )}\n`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
