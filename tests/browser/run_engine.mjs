// Runs the browser test modules (tests/browser/*.test.js, or the files given after the
// engine) in one engine, started by bench/launch.mjs with no automation attached: one
// fresh browser and profile per module, on tests/browser/index.html?module=…&report=…,
// whose harness POSTs its results back. This is how Firefox and WebKit run them, which
// playwright cannot drive in their Debian builds. Needs pkg/ built.
//
//   node tests/browser/run_engine.mjs firefox|webkit|chromium [tests/browser/x.test.js …]
//
// Prints one line per test and exits non-zero if any failed.
import { basename } from 'node:path';
import { browserFor } from '../../bench/engines.mjs';
import { launch } from '../../bench/launch.mjs';
import { PAGE_TIMEOUT_MS, PLAYWRIGHT_ONLY, pageRuns, startFixtures, testModules } from './fixtures.mjs';
import { printResults } from './results.mjs';

const [engine, ...args] = process.argv.slice(2);
const browser = browserFor(engine);
const modules = await testModules(args);
const files = modules.filter((f) => !PLAYWRIGHT_ONLY.includes(basename(f)));
for (const f of modules.filter((m) => !files.includes(m))) {
  console.log(`not run in ${engine}: ${basename(f)} needs playwright to choose its file`);
}
const { server, flight, hostile, close } = await startFixtures(files);
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
  for (const { file, query, label } of pageRuns(files, engine)) {
    const url = `${server.url}tests/browser/index.html?module=${encodeURIComponent(file)}&engine=${engine}${query}`;
    let results;
    try {
      ({ results } = await launch(browser, url, { routes, timeoutMs: PAGE_TIMEOUT_MS }));
    } catch (error) {
      results = [{ name: 'page', ok: false, error: { message: String(error.message), stack: '' } }];
    }
    const counts = printResults(`${engine} ${label}`, results);
    passed += counts.passed;
    failed += counts.failed;
  }
} finally {
  await close();
}

console.log(`browser (${engine}): ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
