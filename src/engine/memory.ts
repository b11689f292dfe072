/**
 * WebAssembly memories for sketches: the engine runs only on memory that is a
 * WebAssembly.Memory, so sketches allocate their counters as one whenever the process has
 * WebAssembly (also for the JS engine, so that a shared sketch's handle can be attached by
 * either engine in any thread).
 */

/** The size of a WebAssembly page. */
export const PAGE_BYTES = 65536;

/** Whether this process can run the engine (not under --jitless, where WebAssembly is absent). */
export function engineAvailable(): boolean {
  return typeof WebAssembly === 'object' && typeof WebAssembly.Memory === 'function';
}

/** `bytes` rounded up to whole pages. */
export function pageBytes(bytes: number): number {
  return Math.ceil(bytes / PAGE_BYTES) * PAGE_BYTES;
}

/**
 * A fresh, zeroed WebAssembly.Memory of `bytes` (rounded up to pages), never grown; or
 * undefined when the process cannot make one. V8 reserves about 10 GiB of address space for
 * each memory (so that the code needs no bounds checks), and on this machine the 12,912th
 * memory held at once failed (RangeError: could not allocate memory): a sketch then runs on
 * the JS engine, over memory of its own, rather than failing.
 */
export function engineMemory(bytes: number, shared: boolean): WebAssembly.Memory | undefined {
  const pages = Math.ceil(bytes / PAGE_BYTES);
  try {
    return new WebAssembly.Memory({ initial: pages, maximum: pages, shared });
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
