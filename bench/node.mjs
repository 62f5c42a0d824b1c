// Runs the benchmark suites in Node 20 against the built package (node_modules/quiver-arrow)
// and prints markdown tables. Usage: node bench/node.mjs DATA_DIR OUT.json [suite...]
// BENCH_ZSTD_C=DIR adds the zstd-c package flavour in DIR (build.sh --zstd-c) to the
// reader suite's ZSTD rows. BENCH_QUICK=1 (bench.sh --quick): few rounds.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import * as flechette from '@uwdata/flechette';
import * as fzstd from 'fzstd';
import lz4 from 'lz4js';
import { registerCodecs } from './codecs.js';
import { QUICK, suites } from './suites.js';

const [dataDir, outFile, ...only] = process.argv.slice(2);
const files = {};
for (const f of readdirSync(dataDir).filter((f) => f.endsWith('.arrows'))) {
  files[f.replace(/\.arrows$/, '')] = new Uint8Array(readFileSync(join(dataDir, f)));
}
registerCodecs({ arrow, flechette, lz4, fzstd });
const quiverZstdC = process.env.BENCH_ZSTD_C
  ? await import(pathToFileURL(resolve(process.env.BENCH_ZSTD_C, 'node/index.js')).href)
  : undefined;
const libs = { quiver, quiverZstdC, arrow, flechette };
const env = `Node ${process.versions.node}`;
const report = {};
for (const [name, suite] of Object.entries(suites)) {
  if (only.length && !only.includes(name)) continue;
  const results = await suite.run(libs, files, { ...(process.env.BENCH_QUICK ? QUICK : {}), log: (m) => process.stderr.write(`[${name}] ${m}\n`) });
  report[name] = results;
  console.log(suite.tables(results, env) + '\n');
}
writeFileSync(outFile, JSON.stringify({ env, report }, null, 1));
