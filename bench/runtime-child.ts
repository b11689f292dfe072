/**
 * The core cases on one runtime, in a process of its own (bench/runtimes.ts starts it with each
 * runtime's binary: Node 20, 22, 24, 26, Bun): `<runtime> runtime-child.js <events> <runs>`. Each
 * rotation alternates its competitors run by run, as the suites that first measured them do
 * (increment.ts, limits.ts); prints one JSON line: the runtime and ns per operation, by name.
 */
import { CountMinSketch } from '../src/index.js';
import { mapIntsCompetitor, sketchIntsCompetitor } from './increment.js';
import { checks, EVENTS, peers } from './limits.js';
import { rotate, rotateAsync } from './measure.js';
import { Prng } from './prng.js';
import { intKeys, ipKeys, KEY_COUNT, SEED, uniformEvents } from './workload.js';

/** What a child prints. */
export interface RuntimeSample {
  /** `Node 24.22.3 (V8 ...)` or `Bun 1.4.5 (JavaScriptCore)`. */
  runtime: string;
  /** ns per operation, by competitor, one per round. */
  rounds: Record<string, number[]>;
}

/** The runtime running this process, as the report names it. */
function runtimeName(): string {
  const bun = (globalThis as { Bun?: { version: string } }).Bun;
  if (bun !== undefined) return `Bun ${bun.version} (JavaScriptCore)`;
  return `Node ${process.versions.node} (V8 ${process.versions.v8})`;
}

/** The peers each runtime is measured against (rows 33.2, 33.3). */
const RUNTIME_PEERS = ['RateLimiterMemory.consume', 'MemoryStore.increment'];

async function main(events: number, runs: number): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const prng = new Prng(SEED);
  const keys = intKeys(KEY_COUNT, prng);
  const draws = uniformEvents(events, KEY_COUNT, prng);
  const ints = rotate(
    [
      mapIntsCompetitor('Map', keys, draws),
      sketchIntsCompetitor('sketch', new CountMinSketch(), keys, draws),
    ],
    { operations: events, warmupOperations: 200_000, runs, log },
  );
  const addresses = ipKeys(KEY_COUNT, new Prng(SEED));
  const limitEvents = uniformEvents(EVENTS, KEY_COUNT, new Prng(SEED + 20));
  const others = peers(addresses, limitEvents);
  const limits = await rotateAsync(
    [
      ...checks(addresses, limitEvents),
      // The peers of rows 33.x only (not the drop-in stores).
      ...others.competitors.filter((c) => RUNTIME_PEERS.includes(c.name)),
    ],
    { operations: EVENTS, warmupOperations: 200_000, runs, log },
  );
  others.close();
  const sample: RuntimeSample = {
    runtime: runtimeName(),
    rounds: Object.fromEntries([...ints, ...limits]),
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

if (process.argv[3] !== undefined) await main(Number(process.argv[2]), Number(process.argv[3]));
