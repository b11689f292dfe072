/**
 * `hotcount top --demo` (what `npm start` runs): counts a generated stream of API requests,
 * then counts it again with an exact `Map` to show what the sketch saved and that the top k
 * agree. The stream is generated, so the demo needs no input; it is seeded, so it is the same
 * on every run (the sketch's secret is not, so its error terms differ run to run).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { keyText } from './escape.js';
import { formatBytes, renderJson, renderTable } from './render.js';
import { type TopOptions, writeOut } from './top.js';
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

/** Memory held by JS objects and array buffers now, after a full collection. */
function liveBytes(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

export async function runDemo(options: TopOptions): Promise<void> {
  const beforeCounting = liveBytes();
  const counter = new TopCounter(options);
  await counter.count('the demo stream', demoChunks());
  // Live heap and buffers grown while counting: the sketch and its table, and whatever of the
  // generated stream the collector has not let go of yet (runs vary by a few MiB).
  const hotcountBytes = liveBytes() - beforeCounting;
  // Time spent counting, not generating the demo stream.
  const summary = counter.summary(counter.busySeconds);

  const beforeMap = liveBytes();
  const exact = new Map<string, number>();
  for (const line of demoLines()) exact.set(line, (exact.get(line) ?? 0) + 1);
  const mapBytes = liveBytes() - beforeMap;
  const exactTop = [...exact].sort((a, b) => b[1] - a[1]).slice(0, options.k);
  const reported = new Set(summary.rows.map((row) => keyText(row.key as Uint8Array)));
  const agree = exactTop.filter(([key]) => reported.has(key)).length;
  const trueCounts = summary.rows.filter(
    (row) => exact.get(keyText(row.key as Uint8Array) ?? '') === row.count,
  ).length;
  const provenExact = summary.rows.filter((row) => row.lowerBound === row.upperBound).length;

  if (options.json) {
    await writeOut(
      renderJson(summary, {
        demo: {
          events: EVENTS,
          distinctKeys: exact.size,
          exactMapBytes: mapBytes,
          hotcountBytes,
          topAgree: agree,
          trueCounts,
          provenExact,
        },
      }),
    );
    return;
  }
  await writeOut([
    `hotcount top --demo: ${EVENTS.toLocaleString('en-US')} generated API requests from ` +
      `${exact.size.toLocaleString('en-US')} customers (Zipf 1.0)\n\n`,
  ]);
  await writeOut(renderTable(summary, options.keyWidth));
  await writeOut([
    `\nMemory, measured: live memory grew by ${formatBytes(hotcountBytes)} while counting (a sketch of ` +
      `${formatBytes(summary.sketchBytes)} and a table of up to ${counter.hitters.capacity} keys); ` +
      `an exact Map of the ${exact.size.toLocaleString('en-US')} distinct keys held ` +
      `${formatBytes(mapBytes)}, ${(mapBytes / hotcountBytes).toFixed(0)}x more.\n` +
      `The exact top ${exactTop.length}: ${agree} of them reported above; ` +
      `${trueCounts} of the ${summary.rows.length} counts shown equal the true count (checked ` +
      `against the Map); ${provenExact} of them are exact by their bounds alone.\n`,
  ]);
}
