/**
 * undici, the proxy's optional peer dependency, loaded here and nowhere else, so that a user
 * who has none, or one the proxy cannot run on, is told so in one sentence at import instead of
 * meeting undici's own failure later (undici 8 on Node 20 dies while loading, reading
 * `zlib.createZstdDecompress`, which Node 20 lacks; undici 6 has no controller-form handlers,
 * and 7 before 7.28 hands them no raw fields).
 *
 * The proxy takes undici 7.28 and newer, 8 included (package.json's peer range, which the tests
 * prove at both ends): the handler form forward.ts uses is the one both accept.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Undici from 'undici';

/**
 * The undici the proxy forwards with: 7.28 or a newer 7.x (the first to hand a controller-form
 * handler the raw fields, `controller.rawHeaders`), or 8.
 */
const FLOOR_7 = '7.28.0';
const MAJORS = [7, 8];

/** The code of the error this module throws: the CLI turns it into one line. */
export const UNDICI_UNUSABLE = 'ERR_HOTCOUNT_UNDICI';

function unusable(message: string): Error {
  return Object.assign(new Error(message), { code: UNDICI_UNUSABLE });
}

/** [major, minor, patch] of `x.y.z`; NaN parts for what is not one. */
function versionParts(version: string): number[] {
  return version.split('.', 3).map((part) => Number.parseInt(part, 10));
}

/** Whether version `have` is at least `floor` (both `x.y.z`): Node's, or undici's. */
function atLeast(have: string, floor: string): boolean {
  const [a, b] = [versionParts(have), versionParts(floor)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
}

function load(): typeof Undici {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('undici');
  } catch {
    throw unusable(
      "hotcount proxy forwards with undici, which is not installed: run 'npm install undici'",
    );
  }
  const pkg = JSON.parse(readFileSync(join(dirname(entry), 'package.json'), 'utf8')) as {
    version: string;
    engines?: { node?: string };
  };
  const node = process.versions.node;
  const major = versionParts(pkg.version)[0];
  if (!MAJORS.includes(major) || (major === 7 && !atLeast(pkg.version, FLOOR_7))) {
    // undici 8 asks for Node 22.19 or newer.
    const advice = atLeast(node, '22.19.0') ? 8 : 7;
    throw unusable(
      `hotcount proxy forwards with undici ${FLOOR_7} or newer (7 or 8), and undici ${pkg.version} is installed: run 'npm install undici@${advice}'`,
    );
  }
  // An engines field of the form '>=x.y.z' (undici's own): a Node below it cannot load it.
  const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(pkg.engines?.node?.trim() ?? '')?.[1];
  if (floor !== undefined && !atLeast(node, floor)) {
    throw unusable(
      `undici ${pkg.version} needs Node ${floor} or newer, and this is Node ${node}: run 'npm install undici@${MAJORS[0]}', or a newer Node`,
    );
  }
  return require('undici') as typeof Undici;
}

/** undici's Pool, the proxy's connections to its upstream. */
export const { Pool } = load();
/** undici's Pool, as a type. */
export type Pool = Undici.Pool;
