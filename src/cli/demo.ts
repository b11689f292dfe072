/**
 * `hotcount top --demo` (what `npm start` runs): counts a generated stream of API requests,
 * then counts it again with an exact `Map` to show what the sketch saved and that the top k
 * agree. The stream is generated, so the demo needs no input; it is seeded, so it is the same
 * on every run (the sketch's secret is not, so its error terms differ run to run).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { formatBytes, keyText, renderJson, renderTable } from './render.js';
import type { TopOptions } from './top.js';
import { TopCounter } from './top-counter.js';
import { xorshift32, ZipfSampler } from './zipf.js';

const EVENTS = 2_000_000;
const KEYS = 200_000;
const CHUNK_LINES = 16_384;

/** Seeded Zipf(1.0) ranks; rank r becomes a customer id that does not reveal r. */
function* demoLines(): Generator<string> {
  const zipf = new ZipfSampler(KEYS, 1.0);
  const random = xorshift32(0x2545f491);
  for (let i = 0; i < EVENTS; i++) {
    const lo = zipf.sample(random());
    const customer = ((lo * 2654435761) >>> 0) % 1_000_000;
    yield `GET /v1/customers/${String(customer).padStart(6, '0')}/orders`;
  }
}

/** The demo lines as the bytes a file would hold, a chunk at a time (never all at once). */
async function* demoChunks(): AsyncGenerator<Uint8Array> {
  const lines: string[] = [];
  for (const line of demoLines()) {
    lines.push(line);
    if (lines.length === CHUNK_LINES) {
      yield Buffer.from(`${lines.join('\n')}\n`);
      lines.length = 0;
    }
  }
  if (lines.length > 0) yield Buffer.from(`${lines.join('\n')}\n`);
}

/** Heap growth while `build` runs, measured after full collections. */
function heapGrowth<T>(build: () => T): { value: T; bytes: number } {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const value = build();
  gc();
  return { value, bytes: process.memoryUsage().heapUsed - before };
}

export async function runDemo(options: TopOptions): Promise<void> {
  const counter = new TopCounter(options);
  await counter.count(demoChunks());
  // Time spent counting, not generating the demo stream.
  const summary = counter.summary(counter.busySeconds);

  const { value: exact, bytes: mapBytes } = heapGrowth(() => {
    const counts = new Map<string, number>();
    for (const line of demoLines()) counts.set(line, (counts.get(line) ?? 0) + 1);
    return counts;
  });
  const exactTop = [...exact].sort((a, b) => b[1] - a[1]).slice(0, options.k);
  const reported = new Set(summary.rows.map((row) => keyText(row.key as Uint8Array)));
  const agree = exactTop.filter(([key]) => reported.has(key)).length;
  const exactCounts = summary.rows.filter(
    (row) => exact.get(keyText(row.key as Uint8Array) ?? '') === row.count,
  ).length;
  const tableBytes = counter.hitters.capacity * 64; // an entry: object, id, bounds, a short key

  if (options.json) {
    process.stdout.write(
      renderJson(summary, {
        demo: {
          events: EVENTS,
          distinctKeys: exact.size,
          exactMapBytes: mapBytes,
          topAgree: agree,
        },
      }),
    );
    return;
  }
  process.stdout.write(
    `hotcount top --demo: ${EVENTS.toLocaleString('en-US')} generated API requests from ` +
      `${exact.size.toLocaleString('en-US')} customers (Zipf 1.0)\n\n`,
  );
  process.stdout.write(renderTable(summary));
  process.stdout.write(
    `\nMemory: the sketch used ${formatBytes(summary.sketchBytes)} (+ a table of ` +
      `${counter.hitters.capacity} keys, ~${formatBytes(tableBytes)}); an exact Map of the ` +
      `${exact.size.toLocaleString('en-US')} distinct keys took ${formatBytes(mapBytes)} of heap ` +
      `(measured), ${(mapBytes / (summary.sketchBytes + tableBytes)).toFixed(0)}x more.\n` +
      `The exact top ${exactTop.length}: ${agree} of them reported above; ` +
      `${exactCounts} of ${summary.rows.length} counts shown are exact.\n`,
  );
}
