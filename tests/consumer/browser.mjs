// Serves a built Vite app (dist/ of the folder given) on 127.0.0.1, loads it in Debian's
// headless chromium through playwright-core and checks what tests/consumer/vite/main.js
// wrote into #result. Exits non-zero on a wrong result or a page error.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../browser/server.mjs';

const [dist, expectedJson] = process.argv.slice(2);
const server = await serve(dist);
const profile = await mkdtemp(join(tmpdir(), 'quiver-consumer-'));
const chromiumPath = process.env.CHROMIUM
  ?? execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
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
  const result = JSON.parse(text);
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(result, JSON.parse(expectedJson));
  assert.deepEqual(errors, []);
  console.log(`ok - the Vite build decodes in chromium: ${text}`);
} finally {
  await context.close();
  await server.close();
  await rm(profile, { recursive: true, force: true });
}
