// End-to-end test of the demo (issue 6) in Debian's headless chromium via playwright-core,
// or in firefox-esr via geckodriver (tests/e2e/webdriver.mjs):
//  1. pkg-scripts/demo.sh on an ephemeral port; the page streams, graphs and compares,
//     its figures agree with the stream's stats, the preview shows the generated rows.
//  2. The page on another origin than the gateway; the gateway is killed mid-stream: the
//     page shows the error in words, and runs again once a gateway is back; Stop ends a
//     stream, and a connection attempt that is never answered.
// Screenshots go to test-results/. Run: node tests/e2e/demo.mjs [chromium|firefox]
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { browserFor } from '../../bench/engines.mjs';
import { serve } from '../browser/server.mjs';
import { firefoxPage } from './webdriver.mjs';

const engine = process.argv[2] ?? 'chromium';
if (!['chromium', 'firefox'].includes(engine)) throw new Error(`expected chromium or firefox, found ${engine}`);
/** A screenshot's file name, with the engine's name unless it is Chromium's. */
const screenshot = (name) => join(results, engine === 'chromium' ? `${name}.png` : `${name}-${engine}.png`);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const results = join(root, 'test-results');
// The debug gateway, which `cargo test` builds too (DEMO_PROFILE in demo.sh);
// QUIVER_GATEWAY names another binary.
const gatewayBin = process.env.QUIVER_GATEWAY
  ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'debug/quiver-gateway');
const LABELS = ['alpha', 'beta', 'gamma', 'delta'];
// demo.sh may have to build the package and the gateway first.
const START_MS = 900_000;

/** Runs `command`, resolving with the gateway's port once it listens. */
function launch(command, args, env = {}) {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`no gateway after ${START_MS} ms:\n${output}`)), START_MS);
    const scan = (chunk) => {
      output += chunk;
      const found = /quiver-gateway: ws:\/\/127\.0\.0\.1:(\d+)\/flight/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolvePort(Number(found[1]));
      }
    };
    child.stdout.on('data', scan);
    child.stderr.on('data', scan);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}:\n${output}`));
    });
  });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { child, port, exited, output: () => output };
}

async function browserPage() {
  // geckodriver has no console events (only WebDriver BiDi has): no log in Firefox.
  if (engine === 'firefox') return { ...await firefoxPage({ width: 1280, height: 1300 }), log: [] };
  const browser = await chromium.launch({ executablePath: browserFor('chromium'), args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1300 } });
  const log = [];
  page.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.stack ?? e}`));
  return { browser, page, log };
}

/**
 * The page stays responsive because it decodes nothing itself: only worker.js
 * instantiates Quiver, so the page never fetches a .wasm. (Chromium lists the worker's
 * JS module fetches among the page's resources, but not the worker's wasm.) How long
 * the page took per worker message is wall-clock time, which the machine's load
 * stretches (39 ms once under CI): it is bounded only against a frozen page.
 */
async function assertPageDecodesNothing(page) {
  const { loaded, longestHandlerMs } = await page.evaluate(() => ({
    loaded: performance.getEntriesByType('resource').map((r) => new URL(r.name).pathname),
    longestHandlerMs: window.quiverDemo.run.longestHandlerMs,
  }));
  assert.ok(loaded.some((path) => path.endsWith('/app.js')), `the page's resources are listed: ${loaded}`);
  const wasm = loaded.filter((path) => path.endsWith('.wasm'));
  assert.deepEqual(wasm, [], 'the page instantiated Quiver itself, not only its worker');
  assert.ok(longestHandlerMs < 1000, `the page froze for ${longestHandlerMs} ms on one worker message`);
}

const state = (page) => page.evaluate(() => window.quiverDemo.state);
const untilState = (page, states, timeout = 120_000) =>
  page.waitForFunction((s) => s.includes(window.quiverDemo.state), states, { timeout });

test('the demo streams, graphs live, compares, and previews the first rows', { timeout: START_MS + 180_000 }, async (t) => {
  const demo = launch('pkg-scripts/demo.sh', [], { PORT: '0', DEMO_PROFILE: 'debug' });
  const { browser, page, log } = await browserPage();
  try {
    const port = await demo.port;
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => window.quiverDemo?.state === 'idle');
    await page.selectOption('#dataset', '32');
    await page.selectOption('#rows', '65536');
    await page.selectOption('#compression', 'none');
    await page.click('#start');
    await untilState(page, ['done', 'failed']);
    const run = await page.evaluate(() => {
      const { run, charts, error } = window.quiverDemo;
      return {
        ...run, error,
        points: [charts.throughput.points, charts.allocation.points],
        plotted: [charts.throughput.data.slice(1).map((s) => s.length), charts.allocation.data.slice(1).map((s) => s.length)],
        mbsPlotted: charts.throughput.data[1],
        allocatedPlotted: charts.allocation.data[3],
        shown: Object.fromEntries([...document.querySelectorAll('#stats dd')].map((d) => [d.dataset.stat, d.textContent])),
        table: [...document.querySelectorAll('#preview tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent)),
        errorHidden: document.getElementById('error').hidden,
      };
    });
    assert.equal(await state(page), 'done', `the run failed: ${run.error}\n${log.join('\n')}`);
    assert.ok(run.errorHidden);
    const { stats, samples } = run;

    // The charts got one point per batch in every series.
    assert.equal(stats.batches, 32);
    assert.equal(stats.rows, 32 * 65536);
    assert.deepEqual(run.points, [32, 32]);
    assert.deepEqual(run.plotted, [[32, 32], [32, 32, 32]]);
    assert.deepEqual(run.mbsPlotted, samples.map((s) => s.mbs));
    // Equal to the last bit but for rounding: Firefox once plotted the first sample one
    // ulp away from the value the worker reported.
    const mib = samples.map((s) => s.allocated / 2 ** 20);
    assert.equal(run.allocatedPlotted.length, mib.length);
    run.allocatedPlotted.forEach((v, i) =>
      assert.ok(Math.abs(v - mib[i]) <= 1e-12 * Math.abs(mib[i]), `point ${i}: ${v}, expected ${mib[i]}`));

    // Throughput and allocation are positive and add up to the stream's stats.
    for (const s of samples) {
      for (const key of ['mbs', 'bps', 'allocated', 'live', 'wasm']) assert.ok(s[key] > 0, `${key} = ${s[key]}`);
    }
    assert.equal(run.bytesReceived, stats.bytesReceived);
    // The last batch arrives before the 8-byte end-of-stream marker.
    assert.equal(samples.at(-1).bytesReceived + 8, stats.bytesReceived);
    assert.equal(stats.bytesCopied, stats.bytesReceived, 'uncompressed: each byte copied once');
    assert.equal(samples.reduce((n, s) => n + s.allocated, 0), run.allocated);
    // Every received byte is copied into wasm memory once, so allocated >= copied; and
    // little more than that: no hidden copies.
    assert.ok(run.allocated >= stats.bytesCopied - 8, `allocated ${run.allocated}, copied ${stats.bytesCopied}`);
    assert.ok(run.allocated < stats.bytesCopied * 1.05 + 65536, `allocated ${run.allocated}, copied ${stats.bytesCopied}`);
    const mean = stats.bytesReceived / 1e6 / run.elapsed;
    assert.equal(run.shown.throughput, `${mean.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB/s`);
    assert.equal(run.shown.batches, '32');
    assert.equal(run.shown.messages, '33');
    await assertPageDecodesNothing(page);
    // Whole tasks (Long Tasks API: 50 ms or more; 0: none) also hold painting, which in
    // headless Chromium without a GPU took up to 130 ms under CI's load: reported below,
    // and only bounded against a frozen page.
    assert.ok(run.longestTaskMs < 1000, `the page froze for ${run.longestTaskMs} ms while streaming`);
    assert.ok(run.longestPanelTaskMs < 1000, `the page froze for ${run.longestPanelTaskMs} ms in the comparison panels`);
    t.diagnostic(`${mean.toFixed(1)} MB/s, ${run.allocated} bytes allocated for ${stats.bytesCopied} copied, longest message ${run.longestHandlerMs.toFixed(2)} ms, longest task ${run.longestTaskMs} ms streaming, ${run.longestPanelTaskMs} ms in the panels (0: none over 50 ms)`);

    // The generated data: id from 0, value = (id % 1000) * 0.25, label cycling.
    const expected = Array.from({ length: 8 }, (_, id) => [String(id), String((id % 1000) * 0.25), LABELS[id % 4]]);
    assert.deepEqual(run.preview.rows, expected);
    assert.deepEqual(run.table, expected);

    // Comparison panels: both decoders read the same rows; the writer allocates a
    // message's size right-sized and over 1 MiB with fixed chunks.
    const quiver = run.decode.Quiver;
    const arrow = run.decode['apache-arrow JS'];
    assert.equal(quiver.rows, stats.rows);
    assert.equal(arrow.rows, stats.rows);
    assert.equal(quiver.sum, arrow.sum);
    assert.ok(quiver.ms > 0 && arrow.ms > 0);
    assert.equal(run.writer.length, 6);
    for (const w of run.writer) {
      assert.ok(w.exact >= w.payload && w.exact < w.payload + 4096, JSON.stringify(w));
      assert.ok(w.fixed > 1 << 20, JSON.stringify(w));
    }

    await mkdir(results, { recursive: true });
    await page.screenshot({ path: screenshot('demo'), fullPage: true });
  } finally {
    await browser.close();
    demo.child.kill('SIGTERM');
  }
  // Ctrl-C or TERM stops the gateway with the script.
  const { code, signal } = await demo.exited;
  assert.ok(code === 0 || signal === 'SIGTERM', `demo.sh ended with ${code ?? signal}`);
  const port = await demo.port;
  await assert.rejects(fetch(`http://127.0.0.1:${port}/www/`), 'the gateway still answers after demo.sh stopped');
});

test('a gateway on another port dies mid-stream: the page says so and runs again', { timeout: 300_000 }, async () => {
  const server = await serve(root);
  const origin = server.url.replace(/\/$/, '');
  const args = (port) => ['--demo', '--listen', `127.0.0.1:${port}`, '--allow-origin', origin];
  let gateway = launch(gatewayBin, args(0));
  const { browser, page, log } = await browserPage();
  try {
    const port = await gateway.port;
    await page.goto(`${server.url}www/`);
    await page.waitForFunction(() => window.quiverDemo?.state === 'idle');
    await page.fill('#gateway', `127.0.0.1:${port}`);
    // Long and slow (16 KiB of credit at a time), so it is mid-stream when killed.
    await page.selectOption('#dataset', '128');
    await page.selectOption('#rows', '262144');
    await page.selectOption('#compression', 'zstd');
    await page.selectOption('#segment', '16384');
    await page.click('#start');
    await page.waitForFunction(() => window.quiverDemo.run?.batches >= 2, null, { timeout: 120_000 });
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    await untilState(page, ['failed', 'done'], 30_000);
    const failed = await page.evaluate(() => ({
      state: window.quiverDemo.state,
      batches: window.quiverDemo.run.batches,
      error: document.getElementById('error').textContent,
      shown: !document.getElementById('error').hidden,
      start: !document.getElementById('start').disabled,
      stop: document.getElementById('stop').disabled,
    }));
    assert.equal(failed.state, 'failed', log.join('\n'));
    // ZSTD batches of 262144 rows take tens of milliseconds each to decompress (57 ms
    // tasks when the page decoded them itself); in the worker, none of it is page work.
    await assertPageDecodesNothing(page);
    assert.ok(failed.batches >= 2 && failed.batches < 128);
    assert.ok(failed.shown);
    assert.match(failed.error, /^The stream failed after \d+ batches: \S.*/);
    assert.ok(failed.start && failed.stop, 'Start is enabled and Stop disabled again');
    await mkdir(results, { recursive: true });
    await page.screenshot({ path: screenshot('demo-gateway-stopped'), fullPage: true });

    // The same page, with nothing reloaded, runs once a gateway listens there again.
    gateway = launch(gatewayBin, args(port));
    await gateway.port;
    // Stop cancels a stream: no error, and the page says where it stopped.
    await page.click('#start');
    await page.waitForFunction(() => window.quiverDemo.run?.batches >= 1, null, { timeout: 120_000 });
    await page.click('#stop');
    await untilState(page, ['stopped', 'failed', 'done'], 30_000);
    const stopped = await page.evaluate(() => ({
      state: window.quiverDemo.state, error: window.quiverDemo.error,
      status: document.getElementById('status').textContent,
    }));
    assert.equal(stopped.state, 'stopped', stopped.error);
    assert.match(stopped.status, /^Stopped after \d+ batches\.$/);

    // Stop works while connecting to an address that accepts and never answers.
    const silent = createServer(() => {});
    await new Promise((r) => silent.listen(0, '127.0.0.1', r));
    try {
      await page.fill('#gateway', `127.0.0.1:${silent.address().port}`);
      await page.click('#start');
      await untilState(page, ['streaming'], 10_000);
      await page.click('#stop');
      await untilState(page, ['stopped', 'failed', 'done'], 10_000);
      const unanswered = await page.evaluate(() => ({
        state: window.quiverDemo.state, error: window.quiverDemo.error,
        status: document.getElementById('status').textContent,
      }));
      assert.equal(unanswered.state, 'stopped', unanswered.error);
      assert.equal(unanswered.status, 'Stopped after 0 batches.');
    } finally {
      silent.close();
    }
    await page.fill('#gateway', `127.0.0.1:${port}`);

    await page.selectOption('#dataset', '8');
    await page.selectOption('#rows', '1024');
    await page.selectOption('#compression', 'lz4');
    await page.click('#start');
    await untilState(page, ['done', 'failed']);
    const again = await page.evaluate(() => ({
      state: window.quiverDemo.state, error: window.quiverDemo.error,
      batches: window.quiverDemo.run.batches, errorHidden: document.getElementById('error').hidden,
    }));
    assert.equal(again.state, 'done', again.error);
    assert.equal(again.batches, 8);
    assert.ok(again.errorHidden, 'the old error is cleared');
  } finally {
    await browser.close();
    gateway.child.kill('SIGKILL');
    await server.close();
  }
});
