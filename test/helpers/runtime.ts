/**
 * The runtime a suite runs on. The core's and the node:http middleware's suites run on Node,
 * and under Bun and Deno too (tools/matrix.mjs, their test runners take node:test); a test of
 * what only Node can do says so with `nodeOnly`, and why.
 */
export const RUNTIME: 'node' | 'bun' | 'deno' =
  'Bun' in globalThis ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';

/** A test's `skip` option: false on Node; elsewhere the reason, which the runner prints. */
export function nodeOnly(why: string): false | string {
  return RUNTIME === 'node' ? false : `Node only: ${why}`;
}
