// Runs the browser test modules (tests/browser/*.test.js, or the files given as
// arguments) in Debian's headless chromium through playwright-core, one fresh page per
// module, against a static server on 127.0.0.1 that serves the repo. Needs pkg/ built.
// Prints one line per test and exits non-zero if any failed.
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { browserFor } from '../../bench/engines.mjs';
import { PAGE_TIMEOUT_MS, pageRuns, startFixtures, testModules } from './fixtures.mjs';
import { indent, printResults } from './results.mjs';

const files = await testModules(process.argv.slice(2));
const { server, flight, hostile, fileOnDisk, close } = await startFixtures(files);
const profile = await mkdtemp(join(tmpdir(), 'quiver-chromium-'));
// A persistent context on a fresh profile dir: the only way to choose --user-data-dir.
const context = await chromium.launchPersistentContext(profile, {
  executablePath: browserFor('chromium'),
  headless: true,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    // gc() for tests/browser/reachability.test.js.
    '--js-flags=--expose-gc',
  ],
});

let passed = 0;
let failed = 0;
try {
  for (const { file, query, label } of pageRuns(files, 'chromium')) {
    const page = await context.newPage();
    const log = [];
    page.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => log.push(`[pageerror] ${e.stack ?? e}`));
    page.on('requestfailed', (r) => log.push(`[requestfailed] ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => r.status() >= 400 && log.push(`[http ${r.status()}] ${r.url()}`));
    let results;
    try {
      if (flight && basename(file).startsWith('flight')) {
        const { saw, stop: _, ...info } = flight;
        await page.addInitScript((env) => { window.__flightEnv = env; }, info);
        await page.exposeFunction('__flightSaw', saw);
      }
      if (hostile) await page.addInitScript((base) => { window.__hostileGateway = base; }, hostile.base);
      const url = `${server.url}tests/browser/index.html?module=${encodeURIComponent(file)}&engine=chromium${query}`;
      await page.goto(url);
      if (fileOnDisk && basename(file) === 'file_input.test.js') {
        await page.setInputFiles('#file-on-disk', fileOnDisk.path);
      }
      await page.waitForFunction(() => window.__quiverResults !== undefined);
      results = await withTimeout(page.evaluate(() => window.__quiverResults), label);
    } catch (error) {
      results = [{ name: 'page', ok: false, error: { message: String(error), stack: '' } }];
    }
    const counts = printResults(label, results);
    passed += counts.passed;
    failed += counts.failed;
    if (results.some((r) => !r.ok) && log.length) console.log(indent(log.join('\n')));
    await page.close();
  }
} finally {
  await context.close();
  await close();
  await rm(profile, { recursive: true, force: true });
}

console.log(`browser: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${PAGE_TIMEOUT_MS} ms`)),
      PAGE_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
