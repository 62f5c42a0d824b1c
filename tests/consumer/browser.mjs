// Loads a Vite app in a headless engine and checks what tests/consumer/vite/main.js
// wrote into #result: a built app (a dist/ folder, served here on 127.0.0.1), or one a
// dev server serves (its URL). Exits non-zero on a wrong result or a page error. An
// expected result of {"error": TEXT} expects the app to fail, with an error that
// includes TEXT.
//
//   node browser.mjs APP EXPECTED_JSON [chromium|firefox|webkit]
//
// Chromium (the default) runs through playwright-core, which also reports page errors;
// Firefox and WebKit through bench/launch.mjs, to which the app POSTs its result.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { browserFor } from '../../bench/engines.mjs';
import { launch } from '../../bench/launch.mjs';
import { serve } from '../browser/server.mjs';

const [app, expectedJson, engine = 'chromium'] = process.argv.slice(2);
const expected = JSON.parse(expectedJson);
const server = /^https?:/.test(app) ? { url: app, close() {} } : await serve(app);

if (engine !== 'chromium') {
  try {
    const { result } = await launch(browserFor(engine), server.url, { timeoutMs: 60_000 });
    check(result, []);
  } finally {
    await server.close();
  }
  process.exit();
}

const profile = await mkdtemp(join(tmpdir(), 'quiver-consumer-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: browserFor('chromium'),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const errors = [];
try {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(String(e.stack ?? e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('response', (r) => r.status() >= 400 && errors.push(`http ${r.status()} ${r.url()}`));
  await page.goto(server.url);
  const text = await page.locator('#result').filter({ hasText: /./ }).textContent({ timeout: 60_000 });
  check(JSON.parse(text), errors);
} finally {
  await context.close();
  await server.close();
  await rm(profile, { recursive: true, force: true });
}

/** Checks the app's result, and that the page logged no `errors`. */
function check(result, errors) {
  const text = JSON.stringify(result);
  if (expected.error !== undefined) {
    assert.ok(result.error?.includes(expected.error), `expected an error with ${expected.error}, got ${text}`);
    console.log(`ok - ${app} fails as expected in ${engine}: ${result.error.split('\n')[0]}`);
  } else {
    assert.equal(result.error, undefined, result.error);
    assert.deepEqual(result, expected);
    assert.deepEqual(errors, []);
    console.log(`ok - ${app} decodes in ${engine}: ${text}`);
  }
}
