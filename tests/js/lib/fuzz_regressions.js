// Every input that once crashed a fuzz target (fuzz/regressions/) through the wasm build:
// each gives batches or an Error, never a trap (a Rust panic would abort the instance),
// and the module then still decodes a valid stream. Shared by Node
// (tests/js/fuzz_regressions.test.js) and every browser engine
// (tests/browser/fuzz_regressions.test.js); tests/fuzz_regressions.rs does the same natively.

function decode(StreamReader, bytes, segment) {
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

/**
 * Registers the test. `inputs(target)` lists a target's regression inputs as
 * [name, bytes] pairs; a target that never crashed has none.
 */
export function fuzzRegressionTests({ test, assert, quiver, arrow, inputs }) {
  test('fuzz regressions give batches or an Error in wasm, and the module keeps working', async () => {
    // reader_split inputs start with the byte that seeded the split sizes.
    const cases = [
      ...await inputs('reader'),
      ...(await inputs('reader_split')).map(([n, b]) => [n, b.subarray(1)]),
    ];
    assert.ok(cases.length >= 2, 'the two reader crashes are in fuzz/regressions/reader');
    for (const [name, bytes] of cases) {
      for (const segment of [bytes.length || 1, 1, 13]) {
        try {
          decode(quiver.StreamReader, bytes, segment);
        } catch (error) {
          assert.ok(!(error instanceof WebAssembly.RuntimeError), `${name} trapped: ${error.message}`);
          assert.ok(error instanceof Error && error.message.length > 0, `${name}: ${error}`);
        }
      }
    }
    const valid = arrow.tableToIPC(arrow.tableFromArrays({ id: Int32Array.from([1, 2, 3]) }), 'stream');
    const table = quiver.tableFromIPC(valid);
    assert.equal(table.numRows, 3);
    table.free();
    return `${cases.length} inputs`;
  });
}
