// In-page side of the browser test runners. The page loads one test module, named by
// ?module=, after init() of the web build, runs its tests in order and leaves the results
// in window.__quiverResults for run.mjs (Chromium through playwright) to collect, and,
// given ?report=, POSTs them there for run_engine.mjs (any engine, through
// bench/launch.mjs).
//
// Test modules use the same shape as node:test with node:assert/strict:
//   import { test, assert } from './harness.js';
//   test('name', async () => { assert.equal(1, 1); });
// A test that returns a string has it printed beside its name.

const tests = [];
const TEST_TIMEOUT_MS = 60_000;

export function test(name, fn) {
  tests.push({ name, fn });
}

class AssertionError extends Error {
  name = 'AssertionError';
}

function show(value) {
  try {
    return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
  } catch {
    return String(value);
  }
}

function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  // As node:assert: Dates by their time, Maps by their entries in order.
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof Map) return deepEqual([...a], [...b]);
  if (ArrayBuffer.isView(a)) {
    return a.length === b.length && Array.prototype.every.call(a, (v, i) => Object.is(v, b[i]));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => deepEqual(a[k], b[k]));
}

function matches(error, expected) {
  if (expected === undefined) return true;
  if (expected instanceof RegExp) return expected.test(String(error?.message ?? error));
  // As in node:assert, a class is checked with instanceof, an arrow function is called.
  if (typeof expected === 'function') {
    return expected.prototype === undefined ? expected(error) === true : error instanceof expected;
  }
  return Object.entries(expected).every(([k, v]) =>
    v instanceof RegExp ? v.test(error?.[k]) : deepEqual(error?.[k], v));
}

/** The subset of node:assert/strict that the tests use, with the same names. */
export const assert = {
  fail(message) {
    throw new AssertionError(message);
  },
  ok(value, message) {
    if (!value) throw new AssertionError(message ?? `expected a truthy value, found ${show(value)}`);
  },
  equal(actual, expected, message) {
    if (!Object.is(actual, expected)) {
      throw new AssertionError(message ?? `expected ${show(expected)}, found ${show(actual)}`);
    }
  },
  notEqual(actual, expected, message) {
    if (Object.is(actual, expected)) {
      throw new AssertionError(message ?? `expected anything but ${show(expected)}`);
    }
  },
  deepEqual(actual, expected, message) {
    if (!deepEqual(actual, expected)) {
      throw new AssertionError(message ?? `expected ${show(expected)}, found ${show(actual)}`);
    }
  },
  match(string, regexp, message) {
    if (!regexp.test(string)) {
      throw new AssertionError(message ?? `expected ${show(string)} to match ${regexp}`);
    }
  },
  throws(fn, expected, message) {
    try {
      fn();
    } catch (error) {
      if (matches(error, expected)) return;
      throw new AssertionError(message ?? `threw ${error}, which does not match ${expected}`);
    }
    throw new AssertionError(message ?? 'expected the function to throw');
  },
  async rejects(promiseOrFn, expected, message) {
    try {
      await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
    } catch (error) {
      if (matches(error, expected)) return;
      throw new AssertionError(message ?? `rejected with ${error}, which does not match ${expected}`);
    }
    throw new AssertionError(message ?? 'expected a rejection');
  },
};

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function failure(error) {
  return { message: String(error?.message ?? error), stack: String(error?.stack ?? '') };
}

async function run() {
  const params = new URLSearchParams(location.search);
  const module = params.get('module');
  try {
    const { default: init } = await import('quiver-arrow');
    // ?memory=fixed: the runners' second pass of some modules over fixed-length memory.
    await init({ resizableMemory: params.get('memory') !== 'fixed' });
    await import(`./${module}`);
  } catch (error) {
    return [{ name: `load ${module}`, ok: false, ms: 0, error: failure(error) }];
  }
  const results = [];
  for (const { name, fn } of tests) {
    const start = performance.now();
    try {
      const note = await withTimeout(Promise.resolve().then(fn), TEST_TIMEOUT_MS, name);
      results.push({ name, ok: true, ms: performance.now() - start, note: typeof note === 'string' ? note : undefined });
    } catch (error) {
      results.push({ name, ok: false, ms: performance.now() - start, error: failure(error) });
    }
  }
  return results;
}

window.__quiverResults = run();
const report = new URLSearchParams(location.search).get('report');
if (report) {
  // text/plain: a simple request, with no CORS preflight to the other port.
  window.__quiverResults.then((results) => fetch(`${report}result`, { method: 'POST', body: JSON.stringify({ results }) }));
}
