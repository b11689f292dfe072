/**
 * The few WebAssembly JS API types the engine uses. TypeScript ships them only in its DOM
 * library and @types/node 20 does not declare them; the engine runs in Node, not a page, so
 * it declares what it needs rather than pulling in the DOM's.
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
    static exports(module: Module): { name: string; kind: string }[];
  }
  class Instance {
    constructor(module: Module, imports?: object);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number; shared?: boolean });
    /** An ArrayBuffer, or a SharedArrayBuffer for a shared memory. */
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
  class Global {
    readonly value: number;
  }
}
