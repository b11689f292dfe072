/**
 * The exact table's cost per entry, in isolation from the CLI (whose output phase has costs of
 * its own): every line of a log file counted with `HeavyHitters.addBytes`, as `hotcount top`
 * does, into `new HeavyHitters({ k })`.
 *
 *   node --expose-gc build/bench/table-memory.js [file] [k]
 *
 * The file is read and its line offsets found before the first measurement, and the heavy
 * hitters (so their sketch) are created before it too, so that the growth between the two full
 * collections is the table's alone: heapUsed + external (which includes arrayBuffers, where
 * typed arrays live). `rowsBytes` is what the rows `top()` returns take on top of that. Prints
 * one JSON line.
 */
import { readFileSync } from 'node:fs';
import { HeavyHitters } from '../src/index.js';

const file = process.argv[2] ?? 'bench/.data/access-10m.log';
const k = Number(process.argv[3] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function memoryBytes(): number {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

const bytes = readFileSync(file);
let lines = 0;
for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) lines++;
const ends = new Int32Array(lines);
for (let i = bytes.indexOf(10), n = 0; i >= 0; i = bytes.indexOf(10, i + 1)) ends[n++] = i;

const hitters = new HeavyHitters({ k });
const before = memoryBytes();
const started = performance.now();
for (let n = 0, start = 0; n < lines; n++) {
  const end = ends[n];
  if (end > start) hitters.addBytes(bytes, start, end, 1);
  start = end + 1;
}
const countSeconds = (performance.now() - started) / 1000;
const after = memoryBytes();
const topStarted = performance.now();
const rows = hitters.top(hitters.capacity); // every entry: the table holds at most capacity
const topSeconds = (performance.now() - topStarted) / 1000;
// What the rows of top() take besides the table (each byte key a Uint8Array of its own).
const rowsBytes = memoryBytes() - after;
const entries = rows.length;
console.log(
  JSON.stringify({
    // Read here to keep both alive to the end: V8 frees what no later code reads.
    fileBytes: bytes.length,
    lines: ends.length,
    entries,
    tableBytes: after - before,
    bytesPerEntry: Math.round((after - before) / entries),
    countSeconds: Number(countSeconds.toFixed(2)),
    topSeconds: Number(topSeconds.toFixed(2)),
    rowsBytes,
    first: rows.length > 0 ? rows[0].count : 0,
  }),
);
