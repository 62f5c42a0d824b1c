// Column views, toArray() and toArrowJS() in Node against pyarrow and apache-arrow JS
// (see tests/js/lib/columns.js), on the streams that tests/data/expected.py writes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { columnTests, parseExpected } from './lib/columns.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// A directory of its own: node --test runs the test files in parallel.
const dir = mkdtempSync(join(tmpdir(), 'quiver-expected-'));
execFileSync(`${root}.venv/bin/python`, [`${root}tests/data/expected.py`, dir], { stdio: 'ignore' });
after(() => rmSync(dir, { recursive: true, force: true }));
const expected = parseExpected(readFileSync(`${dir}/expected.json`, 'utf8'));

columnTests({ test, assert, quiver, arrow, expected, read: async (name) => readFileSync(`${dir}/${name}`) });
