// The fuzz regressions in each engine (tests/js/lib/fuzz_regressions.js), fetched from
// the test server, which lists a folder as JSON.
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { fuzzRegressionTests } from '../js/lib/fuzz_regressions.js';

const regressions = new URL('../../fuzz/regressions/', import.meta.url);

/** A target's regression inputs; a target that never crashed has no folder (git keeps none). */
async function inputs(target) {
  const dir = new URL(`${target}/`, regressions);
  const listing = await fetch(dir);
  if (listing.status === 404) return [];
  const names = await listing.json();
  return Promise.all(names.map(async (name) =>
    [`${target}/${name}`, new Uint8Array(await (await fetch(new URL(name, dir))).arrayBuffer())]));
}

fuzzRegressionTests({ test, assert, quiver, arrow, inputs });
