// The fuzz regressions in Node (tests/js/lib/fuzz_regressions.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { fuzzRegressionTests } from './lib/fuzz_regressions.js';

const regressions = new URL('../../fuzz/regressions/', import.meta.url);

/** A target's regression inputs; a target that never crashed has no folder (git keeps none). */
function inputs(target) {
  const dir = new URL(`${target}/`, regressions);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => [`${target}/${name}`, new Uint8Array(readFileSync(new URL(name, dir)))]);
}

fuzzRegressionTests({ test, assert, quiver, arrow, inputs });
