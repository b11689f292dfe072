/**
 * The few WebAssembly JS API types the engine uses. TypeScript ships them only in its DOM
 * library and @types/node 20 does not declare them; the engine runs in Node, not a page, so
 * it declares what it needs rather than pulling in the DOM's.
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module, imports?: object);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}
