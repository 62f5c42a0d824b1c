// bench/launch.mjs, the browser launcher every benchmark figure and the Firefox and
// WebKit test tiers come from: a page it opens, in each engine, reports over plain HTTP,
// with no automation attached, and nothing outlives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserFor, ENGINE_NAMES, versionOf } from '../../bench/engines.mjs';
import { launch } from '../../bench/launch.mjs';
import { serve } from '../browser/server.mjs';

const chromium = browserFor('chromium');

/** Serves a page whose module script is `body` (with `report`, the endpoint) and runs `check` on its URL. */
async function withPage(body, check) {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-launch-test-'));
  await writeFile(join(dir, 'index.html'), `<!doctype html><script type="module">
const report = new URLSearchParams(location.search).get('report');
const post = (route, body) => fetch(report + route, { method: 'POST', body });
${body}
</script>`);
  const server = await serve(dir, 0, { isolated: true });
  try {
    return await check(`${server.url}index.html`);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const profiles = async () => (await readdir(tmpdir())).filter((f) => f.startsWith('quiver-launch-') && !f.startsWith('quiver-launch-test-'));

for (const engine of ENGINE_NAMES) {
  test(`launch resolves with what the page POSTs in ${engine}, answers its routes, and leaves no profile behind`, async () => {
    const before = await profiles();
    const result = await withPage(`
const { n } = await (await fetch(report + 'counter?by=2')).json();
await post('result', JSON.stringify({ n, webdriver: navigator.webdriver }));`,
    (url) => launch(browserFor(engine), url, { routes: { counter: ({ by }) => ({ n: 40 + Number(by) }) } }));
    // navigator.webdriver is true in a page that automation drives.
    assert.deepEqual(result, { n: 42, webdriver: false });
    // Profiles of other runs may come and go meanwhile: only a new one is this launch's.
    assert.deepEqual((await profiles()).filter((p) => !before.includes(p)), []);
  });
}

test('each engine is labelled with its name and version, as the benchmark tables print it', () => {
  const labels = ENGINE_NAMES.map((engine) => versionOf(engine));
  assert.deepEqual(labels.map((l) => l.replace(/ \d+\.\d+[\w.]*$/, ' <version>')),
    ['Chromium <version>', 'Firefox <version>', 'WebKitGTK <version>'], labels.join(', '));
});

test('launch rejects with the error the page reports', async () => {
  await assert.rejects(
    withPage(`await post('result', JSON.stringify({ error: 'no data here' }));`, (url) => launch(chromium, url)),
    { message: 'the page failed: no data here' },
  );
});

test('launch rejects when the page never reports', async () => {
  await assert.rejects(
    withPage('', (url) => launch(chromium, url, { timeoutMs: 3000 })),
    { message: 'no result from the page after 3000 ms' },
  );
});

test('launch refuses a browser it has no flags for', async () => {
  await assert.rejects(launch('/usr/bin/konqueror', 'http://127.0.0.1:1/'), {
    message: 'bench/launch.mjs knows no flags for /usr/bin/konqueror: expected a chromium, firefox or MiniBrowser binary',
  });
});
