// Every input that once crashed a fuzz target (fuzz/regressions/) through the wasm build:
// each gives batches or an Error, never a trap (a Rust panic would abort the instance),
// and the module then still decodes a valid stream. tests/fuzz_regressions.rs does the
// same natively.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { StreamReader, tableFromIPC } from 'quiver-arrow';

const regressions = new URL('../../fuzz/regressions/', import.meta.url);

/** A target's regression inputs; a target that never crashed has no folder (git keeps none). */
function inputs(target) {
  const dir = new URL(`${target}/`, regressions);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => [`${target}/${name}`, new Uint8Array(readFileSync(new URL(name, dir)))]);
}

function decode(bytes, segment) {
  const reader = new StreamReader();
  try {
    let batches = 0;
    for (let at = 0; at < bytes.length; at += segment) {
      reader.push(bytes.subarray(at, at + segment));
      for (const batch of reader) {
        batches++;
        batch.free();
      }
    }
    reader.finish();
    return batches;
  } finally {
    reader.free();
  }
}

// reader_split inputs start with the byte that seeded the split sizes.
const cases = [...inputs('reader'), ...inputs('reader_split').map(([n, b]) => [n, b.subarray(1)])];

test('fuzz regressions give batches or an Error in wasm, and the module keeps working', () => {
  assert.ok(cases.length >= 2, 'the two reader crashes are in fuzz/regressions/reader');
  for (const [name, bytes] of cases) {
    for (const segment of [bytes.length || 1, 1, 13]) {
      try {
        decode(bytes, segment);
      } catch (error) {
        assert.ok(!(error instanceof WebAssembly.RuntimeError), `${name} trapped: ${error.message}`);
        assert.ok(error instanceof Error && error.message.length > 0, `${name}: ${error}`);
      }
    }
  }
  const valid = tableToIPC(tableFromArrays({ id: Int32Array.from([1, 2, 3]) }), 'stream');
  const table = tableFromIPC(valid);
  assert.equal(table.numRows, 3);
  table.free();
});
