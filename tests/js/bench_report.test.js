// bench/report.mjs with results from several engines: each engine's ratios come from its
// own rows, the README summary gets one row per engine, and a suite an engine failed is
// named with its error rather than left out; each per-row read slower than flechette is
// listed beside its fixed-length-memory and memcpy ratios. Also the Flight SQL suite's table
// (bench/flight_sql.js), which the page takes as Chromium writes it, and the Flight suite's
// split of the decoded gap (bench/flight.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flightTables } from '../../bench/flight.js';
import { flightSqlTables } from '../../bench/flight_sql.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SIZES = [100, 500, 2000, 8192];
const BEGIN = '<!-- benchmark summary: written by pkg-scripts/bench.sh -->';
const END = '<!-- end of benchmark summary -->';

/** Uncompressed reader rows where Arrow JS takes `slower[i]` times Quiver's time at SIZES[i]. */
const readerRows = (slower) => SIZES.flatMap((rows, i) => [
  { codec: 'none', rows, mode: '64k', read: false, name: 'quiver', usPerBatch: 10 },
  { codec: 'none', rows, mode: '64k', read: false, name: 'arrowjs', usPerBatch: 10 * slower[i] },
]);

/** Runs report.mjs on `results` (engine -> JSON) and returns the page and the README's summary. */
async function report(results) {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-report-test-'));
  try {
    for (const [engine, json] of Object.entries(results)) await writeFile(join(dir, `${engine}.json`), JSON.stringify(json));
    await writeFile(join(dir, 'firefox.md'), '#### Reader, Firefox 153.8.0esr, uncompressed');
    await writeFile(join(dir, 'README.md'), `# x\n${BEGIN}\nold\n${END}\n`);
    execFileSync('node', ['bench/report.mjs', dir, join(dir, 'out.md'), '--readme', join(dir, 'README.md')], { cwd: root });
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    return { page: await readFile(join(dir, 'out.md'), 'utf8'), summary: readme.slice(readme.indexOf(BEGIN), readme.indexOf(END)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const results = {
  chromium: { env: 'Chromium 156', report: { reader: readerRows([2, 3, 4, 5]) }, failed: {} },
  firefox: { env: 'Firefox 153.8.0esr', report: { reader: readerRows([1.5, 1.5, 1.5, 1.5]), flight: [] }, failed: { flight: 'TypeError: no | socket\n  at page.js:1' } },
  node: { env: 'Node 20', report: { reader: readerRows([7, 8, 8, 9]) } },
};

test('the summary has a row per work and a column per engine, and names a failed suite', async () => {
  const { summary } = await report(results);
  const rows = summary.split('\n').filter((l) => l.startsWith('| decode, uncompressed | Arrow') || l.startsWith('| Flight'));
  assert.deepEqual(rows, [
    '| decode, uncompressed | Arrow JS\'s async reader | 2.00–5.00× | 1.50× | 7.00–9.00× |',
    '| Flight DoGet, decoded | the gateway\'s raw delivery | – | did not run | – |',
  ]);
  assert.match(summary, /^\| work \| against \| Chromium \| Firefox \| Node \|$/m);
  assert.match(summary, /\(Chromium 156, Firefox 153\.8\.0esr, Node 20\)/);
});

test('the page has a section per engine that ran, with its failures and its tables', async () => {
  const { page } = await report(results);
  assert.deepEqual(page.match(/^## (Chromium|Firefox|WebKit|Node)$/gm), ['## Chromium', '## Firefox', '## Node']);
  const firefox = page.slice(page.indexOf('## Firefox'), page.indexOf('## Node'));
  assert.equal(firefox, '## Firefox\n\n**flight did not run in Firefox:**\n\n```\nTypeError: no | socket\n  at page.js:1\n```\n\n'
    + '#### Reader, Firefox 153.8.0esr, uncompressed\n\n');
});

test('a ratio that rounds onto its threshold shows the digit that decides it', async () => {
  const { page } = await report({
    chromium: { env: 'Chromium 156', report: { reader: readerRows([4.9991, 5.004, 6, 6]) }, failed: {} },
  });
  const line = page.split('\n').find((l) => l.includes('at least 5× faster than Arrow JS'));
  assert.match(line, /100 64k: 4\.999× ✗/);
  assert.match(line, /500 64k: 5\.00×(?! ✗)/);
});

/** Accessor rows of one size: per cell, each contender's figure. */
const accessorRows = (rows, cells) => Object.entries(cells)
  .flatMap(([cell, figures]) => Object.entries(figures).map(([name, ns]) => ({ rows, cell, name, ns })));

test('each per-row cell slower than flechette is set beside fixed-length memory, memcpy, its floor and flechette against itself', async () => {
  const { page } = await report({
    chromium: { env: 'Chromium 156', report: { accessors: accessorRows(2000, {
      'values per row': { quiver: 4, flechette: 1 },
      'decode + README loop': { quiver: 25, flechette: 10, memcpy: 9, 'Quiver loop': 3 },
      'get int32': { quiver: 1, flechette: 2 },
    }) }, failed: {} },
    'chromium-fixed': { env: 'Chromium 156, fixed-length memory', report: { accessors: accessorRows(2000, {
      'values per row': { quiver: 4.1, flechette: 1 },
      'decode + README loop': { quiver: 20, flechette: 10 },
      'get int32': { quiver: 1, flechette: 2 },
    }) }, failed: {} },
    node: { env: 'Node 20', report: { accessors: accessorRows(2000, {
      'toArray float64': { quiver: 1.004, flechette: 1, 'flechette again': 1.02, memcpy: 0.9, 'copy out of wasm memory': 1.003 },
    }) } },
  });
  const section = page.slice(page.indexOf('## Per-row reads slower than flechette'), page.indexOf('## Flight'));
  assert.deepEqual(section.split('\n').filter((l) => /^\| (Chromium|Node) \|/.test(l)), [
    '| Chromium | values per row 2000 | 4.00× | 4.10× | – | – | – |',
    '| Chromium | decode + README loop 2000 | 2.50× | 2.00× | 0.90× | 1.20× | – |',
    '| Node | toArray float64 2000 | 1.004× | – | 0.90× | 1.003× | 1.02× |',
  ]);
  assert.match(page, /^## Chromium \(fixed-length memory\)$/m);
  assert.match(section, /^- Node: 1\.02×–1\.02× over its 1 cells, median 1\.02×\.$/m);
  assert.doesNotMatch(section, /^- Chromium:/m);
});

/** The flightsql suite's rows: one per mode, with its median MiB/s. */
const flightSqlRows = ({ native, raw, decoded }) => Object.entries({ native, raw, decoded })
  .map(([mode, mibPerS]) => ({ mode, rows: 8000000, bytes: 256 * 2 ** 20, rounds: 7, mibPerS, min: mibPerS / 2, max: mibPerS * 2 }));

test('the summary has the Flight SQL query against raw delivery and the native client', async () => {
  const { summary } = await report({
    chromium: { env: 'Chromium 156', report: { reader: readerRows([2, 3, 4, 5]), flightsql: flightSqlRows({ native: 400, raw: 250, decoded: 200 }) }, failed: {} },
    node: { env: 'Node 20', report: { reader: readerRows([7, 8, 8, 9]), flightsql: [] } },
  });
  const rows = summary.split('\n').filter((l) => l.startsWith('| Flight SQL'));
  assert.deepEqual(rows, [
    '| Flight SQL query, decoded | the gateway\'s raw delivery | 0.80× (200 MiB/s decoded) | – |',
    '| Flight SQL query, decoded | arrow-flight\'s Flight SQL client, native | 0.50× (400 MiB/s native) | – |',
  ]);
});

test('the Flight SQL table has each mode\'s median and range, and the ratios', () => {
  const text = flightSqlTables(flightSqlRows({ native: 400, raw: 250, decoded: 200 }), 'Chromium 156');
  assert.equal(text.split('\n')[0], '#### Flight SQL query through quiver-gateway from datafusion-flight-sql-server, '
    + 'Chromium 156, 256 MiB, median (min–max) of 7 rounds');
  const cells = text.split('\n').at(-1).split('|').slice(1, -1).map((c) => c.trim());
  assert.deepEqual(cells, ['8000000', '400 (200–800)', '250 (125–500)', '200 (100–400)', '0.80×', '0.50×', '0.63×']);
});

/** The flight suite's rows for one batch size: MiB/s per mode, with the same CPU and load. */
const flightRows = (rows, speeds) => Object.entries(speeds).map(([mode, mibPerS]) => ({
  rows, batchBytes: 2 ** 20, mode, bytes: 2 ** 30, seconds: 1024 / mibPerS, mibPerS,
  gatewayCpuPerGB: mode.startsWith('bare') ? 0 : 0.7, upstreamCpuPerGB: 0.3, machineBusy: 0.7,
}));

test('the Flight table and page split the gaps: raw against bare, decoded against raw and from bare', async () => {
  const fetchAll = [1, 4].map((connections) => ({
    mode: 'fetchAll', connections, bytes: 2 ** 29, mibPerS: 300, gatewayCpuPerGB: 0.8, machineBusy: 0.7,
  }));
  const flight = [...flightRows(65536, { bare: 500, bareDecoded: 450, raw: 400, decoded: 350 }), ...fetchAll];
  const cells = flightTables(flight, 'Chromium 156').split('\n')[4].split('|').slice(1, -1).map((c) => c.trim());
  assert.deepEqual(cells.slice(0, 9), ['65536', '1.00 MiB', '500', '450', '400', '350', '0.80×', '0.90×', '0.88×']);
  const { page } = await report({ chromium: { env: 'Chromium 156', report: { reader: readerRows([2, 3, 4, 5]), flight }, failed: {} } });
  const line = page.split('\n').find((l) => l.startsWith('- 65536 rows/batch: decoded'));
  assert.match(line, /decoded 350 MiB\/s, 0\.88× the gateway's raw delivery/);
  assert.match(line, /decoded runs at 0\.90× the 500 MiB\/s that the page receives undecoded/);
  // The bare server honours credit as the gateway does: what differs is the upstream.
  const raw = page.split('\n').find((l) => l.startsWith('- 65536 rows/batch: raw'));
  assert.match(raw, /raw 400 MiB\/s against the bare server's 500 \(0\.80×\); the machine was 70% busy, so not CPU: the gateway forwards a batch only once the upstream has sent all of it/);
});
