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

// memoryGrew() cannot throw into the allocator, so it throws what failed from a
// microtask, which node:test would count against whichever test ran: a process of its own.
test('a column that cannot be renewed leaves those beside it renewed, and its error thrown', () => {
  const script = `
    import * as quiver from 'quiver-arrow';
    process.on('uncaughtException', (error) => console.log('uncaught', error.constructor.name));
    const batch = quiver.batchFromColumns({ a: Int32Array.from([1, 2, 3]), b: Int32Array.from([4, 5, 6]) });
    const columns = batch.columns();
    const writer = quiver.StreamWriter.forBatch(batch);
    const table = quiver.tableFromIPC([writer.write(batch), writer.write(batch), writer.finish()].map((c) => c.toUint8Array()));
    const chunks = table.getChild('b').chunks;
    Object.freeze(columns[0]);
    Object.freeze(chunks[0]);
    const before = quiver.memoryStats().wasmMemoryBytes;
    const fill = quiver.batchFromColumns({ fill: new Uint8Array(before) });
    console.log('grew', quiver.memoryStats().wasmMemoryBytes > before);
    console.log('beside', Array.from(columns[1].values).join(), Array.from(chunks[1].values).join());
    fill.free();
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  assert.deepEqual(out.trim().split('\n'), ['grew true', 'beside 4,5,6 4,5,6', 'uncaught TypeError', 'uncaught TypeError']);
});
