// The pyarrow streams and expected values that tests/data/expected.py writes to
// tests/data/types, fetched from the test server.
import { parseExpected } from '../js/lib/columns.js';

const base = new URL('../data/types/', import.meta.url);

export async function dataFiles() {
  const response = await fetch(new URL('expected.json', base));
  if (!response.ok) {
    throw new Error('tests/data/types/expected.json is missing: run .venv/bin/python tests/data/expected.py');
  }
  const expected = parseExpected(await response.text());
  const read = async (name) => new Uint8Array(await (await fetch(new URL(name, base))).arrayBuffer());
  return { expected, read };
}
