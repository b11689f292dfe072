// jest's globals over node:test, for these tests only (loaded with --require): describe, it and
// test (with .each over a tagged template table or an array), the four hooks, jest's own
// `expect` (the npm package jest is built on, so that matchers behave as under jest), and
// jest.setTimeout. These tests use nothing else of jest. Written for hotcount, not vendored.
const nodeTest = require('node:test');
const { expect } = require('expect');

/** jest's default, until jest.setTimeout changes it for the tests declared after it. */
let timeoutMs = 5000;

/**
 * Tests skipped here, by their full name (the describe blocks' and the test's, joined by ' > '),
 * with why; README.md names them too.
 */
const SKIPPED = {
  'Function-Overrides-Throttler Named Usage - fastify > Custom-error-message Route - default > should receive a custom exception':
    "expects the tracker ::1, and on Fastify Nest's getUrl() is 127.0.0.1 (fails with the default storage too)",
  'Function-Overrides-Throttler Named Usage - fastify > Custom-error-message Route - other > should receive a custom exception':
    "expects the tracker ::1, and on Fastify Nest's getUrl() is 127.0.0.1 (fails with the default storage too)",
};

/** The names of the describe blocks being declared, outermost first. */
const path = [];

/** Rows of a `.each` table: a tagged template (heading | heading, then ${values}) or an array. */
function rowsOf(table, values) {
  if (Array.isArray(table) && Array.isArray(table.raw)) {
    const headings = table[0].split('|').map((heading) => heading.trim()).filter(Boolean);
    const rows = [];
    for (let i = 0; i < values.length; i += headings.length) {
      rows.push(Object.fromEntries(headings.map((heading, j) => [heading, values[i + j]])));
    }
    return rows.map((row) => ({ title: row, args: [row] }));
  }
  return table.map((row) => ({ title: row, args: Array.isArray(row) ? row : [row] }));
}

/** A row's title as jest writes it: $key from an object row, %s/%d/%i/%p/%j from an array row. */
function titleOf(name, row) {
  if (!Array.isArray(row) && row !== null && typeof row === 'object') {
    return name.replace(/\$([A-Za-z_][\w.]*)/g, (all, key) =>
      key in row ? String(row[key]) : all,
    );
  }
  const args = Array.isArray(row) ? [...row] : [row];
  return name.replace(/%[sdipj]/g, () => String(args.shift()));
}

function each(declare) {
  return (table, ...values) =>
    (name, fn, timeout) => {
      for (const { title, args } of rowsOf(table, values)) {
        declare(titleOf(name, title), (...rest) => fn(...args, ...rest), timeout);
      }
    };
}

function describe(name, fn) {
  return nodeTest.describe(name, () => {
    path.push(name);
    try {
      return fn();
    } finally {
      path.pop();
    }
  });
}

function it(name, fn, timeout) {
  const skip = SKIPPED[[...path, name].join(' > ')] ?? false;
  // A test function that takes a parameter wants jest's `done`; these tests take none.
  return nodeTest.it(name, { timeout: timeout ?? timeoutMs, skip }, () => fn());
}

function hook(register) {
  return (fn, timeout) => register(() => fn(), { timeout: timeout ?? timeoutMs });
}

describe.each = each(describe);
it.each = each(it);

Object.assign(globalThis, {
  describe,
  it,
  test: it,
  beforeAll: hook(nodeTest.before),
  afterAll: hook(nodeTest.after),
  beforeEach: hook(nodeTest.beforeEach),
  afterEach: hook(nodeTest.afterEach),
  expect,
  jest: {
    setTimeout(ms) {
      timeoutMs = ms;
    },
  },
});
