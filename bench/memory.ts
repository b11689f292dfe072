/**
 * Memory of the 1M-key run (case 6): each measurement in a fresh child process (see
 * memory-child.ts), so that no structure, garbage or compiled code of another case is counted.
 *
 * Growth is heapUsed growth plus `external` growth (external includes `arrayBuffers`, where a
 * sketch's Int32Array lives), both after a full collection. Peak RSS is the whole child's, so it
 * is shown beside that of a baseline child that builds the same keys and no structure.
 * Cases rotate (baseline, sketch 2048x4, sketch default, Map, baseline, ...), and the Map /
 * sketch ratio is taken within each round.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DEPTH, DEFAULT_WIDTH } from '../src/index.js';
import {
  type BenchOptions,
  formatBytes,
  formatCount,
  formatRange,
  formatRatio,
  median,
  type Row,
} from './measure.js';
import type { MemoryCase, MemorySample } from './memory-child.js';
import { KEY_COUNT } from './workload.js';

const CASES: readonly MemoryCase[] = ['baseline', 'sketch 2048x4', 'sketch default', 'Map'];
const CHILD = fileURLToPath(new URL('./memory-child.js', import.meta.url));
/** Allowed overhead of a sketch beyond its counters: the object, its hasher and secret. */
const SKETCH_OVERHEAD_BYTES = 4096;
/** The Map must take at least this many times the 2048x4 sketch's growth. */
const MAP_FACTOR = 500;

function measureInChild(which: MemoryCase, events: number): MemorySample {
  const child = spawnSync(process.execPath, ['--expose-gc', CHILD, which, String(events)], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024,
  });
  if (child.status !== 0) {
    throw new Error(`memory child "${which}" failed (status ${child.status}): ${child.stderr}`);
  }
  const lines = child.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as MemorySample;
}

function growth(sample: MemorySample): number {
  return sample.heapUsedBytes + sample.externalBytes;
}

function describe(samples: MemorySample[]): string {
  const heap = median(samples.map((s) => s.heapUsedBytes));
  const buffers = median(samples.map((s) => s.arrayBuffersBytes));
  const external = median(samples.map((s) => s.externalBytes));
  const rss = median(samples.map((s) => s.maxRssBytes));
  return (
    `${formatBytes(median(samples.map(growth)))} (heap ${formatBytes(heap)}, arrayBuffers ` +
    `${formatBytes(buffers)}, external ${formatBytes(external)}); maxRSS ${formatBytes(rss)}`
  );
}

export async function memorySuite(options: BenchOptions): Promise<Row[]> {
  const { events, runs, log } = options;
  log(
    `  case 6: memory, ${formatCount(KEY_COUNT)} keys, ${formatCount(events)} events, one child per run`,
  );
  const samples = new Map<MemoryCase, MemorySample[]>(CASES.map((c) => [c, []]));
  for (let round = 0; round < runs; round++) {
    const parts: string[] = [];
    for (const which of CASES) {
      const sample = measureInChild(which, events);
      samples.get(which)?.push(sample);
      parts.push(
        `${which} ${formatBytes(growth(sample))} / rss ${formatBytes(sample.maxRssBytes)}`,
      );
    }
    log(`    round ${round + 1}/${runs}: ${parts.join(', ')}`);
  }
  const of = (which: MemoryCase): MemorySample[] => samples.get(which) ?? [];

  const rows: Row[] = [];
  const base = of('baseline');
  rows.push({
    case: `6. memory: baseline child (${formatCount(KEY_COUNT)} integer keys, no structure)`,
    measured: `maxRSS ${formatBytes(median(base.map((s) => s.maxRssBytes)))}`,
    target: 'report only',
    met: null,
  });
  const sizes = [
    { which: 'sketch 2048x4' as const, label: '2048x4', cells: 2048 * 4 },
    {
      which: 'sketch default' as const,
      label: `default ${DEFAULT_WIDTH}x${DEFAULT_DEPTH}`,
      cells: DEFAULT_WIDTH * DEFAULT_DEPTH,
    },
  ];
  for (const { which, label, cells } of sizes) {
    const limit = cells * 4 + SKETCH_OVERHEAD_BYTES;
    const grown = median(of(which).map(growth));
    rows.push({
      case: `6. memory: sketch ${label} after ${formatCount(events)} events`,
      measured: describe(of(which)),
      target: `<= width*depth*4 + 4 KiB = ${formatBytes(limit)}`,
      met: grown <= limit,
    });
  }
  const map = of('Map');
  const sketch = of('sketch 2048x4');
  const ratios = map.map((s, round) => growth(s) / growth(sketch[round]));
  const ratio = median(ratios);
  rows.push({
    case: `6. memory: Map<number, number> vs sketch 2048x4 after ${formatCount(events)} events`,
    measured:
      `${formatRatio(ratio)} the sketch's growth (runs ${formatRange(ratios, formatRatio)}; ` +
      `Map: ${describe(map)})`,
    target: `>= ${MAP_FACTOR}x`,
    met: ratio >= MAP_FACTOR,
  });
  return rows;
}
