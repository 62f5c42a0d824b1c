// Runs the browser test modules (tests/browser/*.test.js, or the files given after the
// engine) in one engine, started by bench/launch.mjs with no automation attached: one
// fresh browser and profile per module, on tests/browser/index.html?module=…&report=…,
// whose harness POSTs its results back. This is how Firefox and WebKit run them, which
// playwright cannot drive in their Debian builds. Needs pkg/ built.
//
//   node tests/browser/run_engine.mjs firefox|webkit|chromium [tests/browser/x.test.js …]
//
// Prints one line per test and exits non-zero if any failed.
import { readdir } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserFor } from '../../bench/engines.mjs';
import { launch } from '../../bench/launch.mjs';
import { printResults } from './results.mjs';
import { serve } from './server.mjs';
import { startFlightEnv } from '../js/lib/flight-env.mjs';
import { startFakeGateway } from '../js/lib/hostile.js';
import { hostileMemoryScenarios } from '../js/lib/hostile_memory_gateway.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const PAGE_TIMEOUT_MS = 300_000;

const [engine, ...args] = process.argv.slice(2);
const browser = browserFor(engine);
const files = args.length > 0
  ? args.map((f) => relative(here, resolve(f)))
  : (await readdir(here)).filter((f) => f.endsWith('.test.js')).sort();
if (files.length === 0) throw new Error(`no *.test.js in ${here}`);

const server = await serve(root);
const flight = files.some((f) => basename(f).startsWith('flight'))
  ? await startFlightEnv({ origin: server.url.replace(/\/$/, '') })
  : undefined;
// The memory-budget tests need a fake gateway, which compresses with the Node build.
const hostile = files.some((f) => basename(f).startsWith('hostile'))
  ? await startFakeGateway(hostileMemoryScenarios(await import('quiver-arrow')))
  : undefined;
// The Flight page fetches its servers' addresses and asks what the pyarrow server saw;
// the memory-budget page fetches the fake gateway's address.
const routes = {
  ...flight && {
    flightEnv: () => {
      const { saw: _, stop: __, ...info } = flight;
      return info;
    },
    saw: ({ line, ms }) => flight.saw(line, Number(ms)),
  },
  ...hostile && { hostileGateway: () => ({ base: hostile.base }) },
};

let passed = 0;
let failed = 0;
try {
  for (const file of files) {
    const url = `${server.url}tests/browser/index.html?module=${encodeURIComponent(file)}&engine=${engine}`;
    let results;
    try {
      ({ results } = await launch(browser, url, { routes, timeoutMs: PAGE_TIMEOUT_MS }));
    } catch (error) {
      results = [{ name: 'page', ok: false, error: { message: String(error.message), stack: '' } }];
    }
    const counts = printResults(`${engine} ${basename(file)}`, results);
    passed += counts.passed;
    failed += counts.failed;
  }
} finally {
  await server.close();
  await flight?.stop();
  hostile?.close();
}

console.log(`browser (${engine}): ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
