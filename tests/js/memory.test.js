// Lifetime of columns and toArrowJS results in Node 20, whose wasm memory cannot be made
// resizable: views are re-derived after growth, toArrowJS copies (tests/js/lib/memory.js).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { parseExpected } from './lib/columns.js';
import { memoryTests } from './lib/memory.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// A directory of its own: node --test runs the test files in parallel.
const dir = mkdtempSync(join(tmpdir(), 'quiver-expected-'));
execFileSync(`${root}.venv/bin/python`, [`${root}tests/data/expected.py`, dir], { stdio: 'ignore' });
after(() => rmSync(dir, { recursive: true, force: true }));
const expected = parseExpected(readFileSync(`${dir}/expected.json`, 'utf8'));
const names = Object.keys(expected)
  .filter((n) => expected[n] !== null && (n.endsWith('.none.arrows') || n.startsWith('gold/')));

memoryTests({ test, assert, quiver, arrow, expected, names, read: async (name) => readFileSync(`${dir}/${name}`) });
