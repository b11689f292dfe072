// The globals jest gives its tests, as jest.cjs provides them over node:test.
declare const describe: any;
declare const it: any;
declare const test: any;
declare const beforeAll: any;
declare const afterAll: any;
declare const beforeEach: any;
declare const afterEach: any;
declare const expect: typeof import('expect').expect;
declare const jest: { setTimeout(ms: number): void };
