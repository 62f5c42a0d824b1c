// Writes docs/benchmarks.md from one bench.sh run: the machine, the date, the commit, each
// issue's target computed from the figures as met or not met, then every table. With
// --readme it also rewrites the summary between README.md's benchmark markers.
// Usage: node bench/report.mjs RESULTS_DIR OUT.md [--readme README.md]
// RESULTS_DIR holds <engine>.json and .md for node and each browser that ran (chromium,
// firefox, webkit), and native.md if it ran.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { floorOf } from './accessors.js';
import { bestFetchAll, MODES as FLIGHT_MODES } from './flight.js';
import { fmt } from './timing.js';

const [dir, outFile, readmeFlag, readmeFile] = process.argv.slice(2);
const load = (engine) => {
  const file = join(dir, `${engine}.json`);
  return existsSync(file) ? { ran: true, failed: {}, ...JSON.parse(readFileSync(file, 'utf8')) } : { report: {}, failed: {} };
};
const chromium = load('chromium');
// Chromium's accessor suite over a fixed-length memory (bench.sh), beside the resizable one.
const chromiumFixed = load('chromium-fixed');
const node = load('node');
// Every engine that ran, in the order of the page and the summary.
const ENGINES = [['Chromium', chromium], ['Firefox', load('firefox')], ['WebKit', load('webkit')], ['Node', node]]
  .filter(([, run]) => run.ran);
const x = (v) => `${fmt(v, 2)}×`;
const range = (values, f = x) => {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return 'n/a';
  const [lo, hi] = [Math.min(...finite), Math.max(...finite)];
  return lo === hi ? f(lo) : `${f(lo)}–${f(hi)}`.replace(/×–/, '–');
};

// --- Lookups in the suites' result rows ----------------------------------------------------

const SIZES = [100, 500, 2000, 8192];
const reader = (run, codec, rows, mode, name, read = false) =>
  run.report.reader?.find((r) => r.codec === codec && r.rows === rows && r.mode === mode && !!r.read === read && r.name === name)?.usPerBatch;
const fastestJsReader = (run, codec, rows, read = false) =>
  Math.min(...['arrowjs', 'arrowjsSync', 'flechette'].map((n) => reader(run, codec, rows, '64k', n, read) ?? Infinity));
const writer = (run, codec, rows, name) => run.report.writer?.find((r) => r.codec === codec && r.rows === rows && r.name === name);
const views = (run, rows, name, work) => run.report.views?.find((r) => r.rows === rows && r.name === name && r.work === work)?.usPerBatch;
const accessor = (run, rows, cell, name) => run.report.accessors?.find((r) => r.rows === rows && r.cell === cell && r.name === name)?.ns;
/** Quiver's time over flechette's, per accessor cell and size that both ran. */
const accessorRatios = (run) => (run.report.accessors ?? [])
  .filter((r) => r.name === 'quiver' && accessor(run, r.rows, r.cell, 'flechette') !== undefined)
  .map((r) => ({ label: `${r.cell} ${r.rows}`, cell: r.cell, rows: r.rows, ratio: r.ns / accessor(run, r.rows, r.cell, 'flechette') }));
const fileRead = (run, rows, name) => run.report.files?.find((r) => r.kind === 'whole' && r.rows === rows && r.name === name)?.usPerBatch;
const flightIn = (run, mode, rows) => run.report.flight?.find((r) => r.mode === mode && r.rows === rows);
const flightSizesIn = (run) => [...new Set((run.report.flight ?? []).filter((r) => r.rows).map((r) => r.rows))];
const flight = (mode, rows) => flightIn(chromium, mode, rows);
const flightSql = (run, mode) => run.report.flightsql?.find((r) => r.mode === mode)?.mibPerS;
const flightSizes = flightSizesIn(chromium);

// --- Targets ----------------------------------------------------------------------------

/**
 * A target: which issue set it, what it asks, and its cells, each a label, the measured
 * figure as text, and whether it meets the target (undefined: not measured in this run).
 */
function target(issue, engine, asks, cells) {
  const measured = cells.filter((c) => c.ok !== undefined);
  const met = measured.filter((c) => c.ok).length;
  const verdict = measured.length === 0 ? 'not measured'
    : met === measured.length ? 'met' : `not met (${met} of ${measured.length} cells)`;
  return { issue, engine, asks, cells, verdict };
}
function cell(label, value, show, test) {
  if (!Number.isFinite(value)) return { label, figure: 'n/a', ok: undefined };
  const ok = test(value);
  // A ratio that rounds onto its threshold gets a third digit, so that "0.90× ✗" cannot be.
  const roundsAcross = show === x && test(Number(value.toFixed(2))) !== ok;
  return { label, figure: roundsAcross ? `${fmt(value, 3)}×` : show(value), ok };
}

const targets = [
  target(2, 'Chromium', 'uncompressed decode at 100–2000 rows at least 5× faster than Arrow JS\'s async reader',
    [100, 500, 2000].flatMap((rows) => ['64k', 'random'].map((mode) => cell(`${rows} ${mode}`,
      reader(chromium, 'none', rows, mode, 'arrowjs') / reader(chromium, 'none', rows, mode, 'quiver'), x, (v) => v >= 5)))),
  target(2, 'Chromium', 'uncompressed decode at 8192 rows within 1.5× of memcpy',
    ['64k', 'random'].map((mode) => cell(`8192 ${mode}`,
      reader(chromium, 'none', 8192, mode, 'quiver') / reader(chromium, 'none', 8192, mode, 'memcpy'), x, (v) => v <= 1.5))),
  target(2, 'Chromium', 'LZ4 decode at least 3× faster than the fastest JS reader',
    SIZES.map((rows) => cell(`${rows}`, fastestJsReader(chromium, 'lz4', rows) / reader(chromium, 'lz4', rows, '64k', 'quiver'), x, (v) => v >= 3))),
  target(2, 'Chromium', 'ZSTD decode (ruzstd) at least 1.5× faster than the fastest fzstd reader',
    SIZES.map((rows) => cell(`${rows}`, fastestJsReader(chromium, 'zstd', rows) / reader(chromium, 'zstd', rows, '64k', 'quiver'), x, (v) => v >= 1.5))),
  ...[['Chromium', chromium], ['Node', node]].map(([engine, run]) =>
    target(9, engine, 'ZSTD decode with the zstd-c flavour at least 5× the fastest fzstd reader (bench.sh --zstd-c)',
      SIZES.map((rows) => cell(`${rows}`, fastestJsReader(run, 'zstd', rows) / reader(run, 'zstd', rows, '64k', 'quiverZstdC'), x, (v) => v >= 5)))),
  target(3, 'Chromium', 'writer allocates at most the payload plus 1 KiB per batch',
    SIZES.map((rows) => {
      const q = writer(chromium, 'none', rows, 'quiver');
      return cell(`${rows}`, q && q.wasmBytesPerBatch - q.payload, (v) => `+${fmt(v / 1024, 1)} KiB`, (v) => v <= 1024);
    })),
  target(3, 'Chromium', 'writer at least 3× faster than the fastest JS writer',
    SIZES.map((rows) => {
      const [q, a, f] = ['quiver', 'arrowjs', 'flechette'].map((n) => writer(chromium, 'none', rows, n)?.usPerBatch);
      return cell(`${rows}`, Math.min(a, f) / q, x, (v) => v >= 3);
    })),
  target(3, 'Chromium', 'writer within 2× of memcpy at 8192 rows',
    [cell('8192', writer(chromium, 'none', 8192, 'quiver')?.usPerBatch / writer(chromium, 'none', 8192, 'memcpy')?.usPerBatch, x, (v) => v <= 2)]),
  target(4, 'Chromium', 'decode and scan through Quiver\'s views no slower than flechette (views ÷ flechette at most 1)',
    SIZES.map((rows) => cell(`${rows}`, views(chromium, rows, 'quiver views', 'decode+scan') / views(chromium, rows, 'flechette', 'decode+scan'), x, (v) => v <= 1))),
  target(4, 'Chromium', 'toArrowJS costs less than Arrow JS\'s own tableFromIPC',
    SIZES.map((rows) => cell(`${rows}`, views(chromium, rows, 'quiver toArrowJS', 'convert') / views(chromium, rows, 'arrowjs', 'convert'), x, (v) => v < 1))),
  ...[['Chromium', chromium], ['Node', node]].map(([engine, run]) =>
    target(32, engine, 'every per-row read (get, isValid, iteration, toArray, table.toArray, decode + README loop) at least as fast as flechette (Quiver ÷ flechette at most 1)',
      accessorRatios(run).map(({ label, ratio }) => cell(label, ratio, x, (v) => v <= 1)))),
  ...[['Chromium', chromium], ['Node', node]].map(([engine, run]) =>
    target(31, engine, 'a whole IPC file reads at the stream reader\'s speed, within 10% (file ÷ stream at most 1.1)',
      SIZES.map((rows) => cell(`${rows}`, fileRead(run, rows, 'quiver') / fileRead(run, rows, 'quiver stream'), x, (v) => v <= 1.1)))),
  target(28, 'Chromium', 'decoded DoGet at least 0.9× the gateway\'s raw delivery in the same run',
    flightSizes.map((rows) => cell(`${rows}`, flight('decoded', rows).mibPerS / flight('raw', rows).mibPerS, x, (v) => v >= 0.9))),
  target(28, 'Chromium', 'the gateway spends at most 1.0 CPU second per GB delivered, pyarrow upstream',
    flightSizes.flatMap((rows) => ['raw', 'decoded'].map((mode) =>
      cell(`${rows} ${mode}`, flight(mode, rows).gatewayCpuPerGB, (v) => `${fmt(v, 2)} s/GB`, (v) => v <= 1)))),
];

// --- What the per-row cells that miss are up against (issue 32) ----------------------------

/**
 * Per engine, each #32 cell that misses: its ratio, the same cell's over Chromium's
 * fixed-length memory, for the README loop one memcpy of the batch over flechette's
 * whole time (the copy into wasm memory that Quiver's decode cannot skip), the cell's
 * floor over flechette's time (bench/accessors.js), and flechette's second timing over
 * its first (the run's noise on one code).
 */
function missedReadRows() {
  // As in the targets: a third digit where two would round onto 1.00×.
  const figure = (ratio) => cell('', ratio, x, (v) => v <= 1).figure;
  const rows = [];
  const noise = [];
  for (const [engine, run, fixed] of [['Chromium', chromium, chromiumFixed], ['Node', node, null]]) {
    const same = sameCodeRatios(run);
    if (same.length > 0) {
      const sorted = same.toSorted((a, b) => a - b);
      noise.push(`- ${engine}: ${x(sorted[0])}–${x(sorted.at(-1))} over its ${same.length} cells, ` +
        `median ${x(sorted[Math.floor(sorted.length / 2)])}.`);
    }
    const fixedRatios = new Map((fixed ? accessorRatios(fixed) : []).map((r) => [r.label, r.ratio]));
    for (const { label, cell: name, rows: size, ratio } of accessorRatios(run).filter((r) => r.ratio > 1)) {
      const flechette = accessor(run, size, name, 'flechette');
      const memcpy = accessor(run, size, name, 'memcpy') / flechette;
      const floor = floorOf(name, (contender) => accessor(run, size, name, contender)) / flechette;
      const same = accessor(run, size, name, 'flechette again') / flechette;
      const fixedFigure = fixed ? (fixedRatios.has(label) ? figure(fixedRatios.get(label)) : 'n/a') : '–';
      const orDash = (v, show) => (Number.isFinite(v) ? show(v) : '–');
      rows.push(`| ${engine} | ${label} | ${figure(ratio)} | ${fixedFigure} | ${orDash(memcpy, x)} | ${orDash(floor, figure)} | ${orDash(same, figure)} |`);
    }
  }
  if (rows.length === 0) return [];
  return ['## Per-row reads slower than flechette', '',
    'Each #32 cell above 1×, Quiver\'s time over flechette\'s: as measured; in Chromium again',
    'with wasm memory left a fixed-length buffer (`init({ resizableMemory: false })`, the',
    'Chromium (fixed-length memory) tables below), which V8 reads faster but which detaches',
    'kept views when memory grows; for the README loop, one memcpy of the batch\'s bytes over',
    'flechette\'s whole time (the copy into wasm memory that Quiver\'s decode cannot skip),',
    'and for toArray float64 one copy of the values from a plain array into a new one; the',
    'cell\'s floor over flechette\'s time: for the README loop that memcpy plus Quiver\'s',
    'loop alone over a table it decoded before, through views of wasm memory (a reader that',
    'must copy the bytes into wasm memory and read them there, with a decode that cost',
    'nothing, would take as long), for toArray float64',
    'Quiver\'s views copied out of wasm memory by hand, a `set` per batch (what a typed',
    'toArray() of Quiver\'s cannot go below); above 1×, the floor alone is slower than',
    'flechette; and flechette timed twice in the same rounds, over itself: how far the run\'s',
    'noise moves a ratio of the same code from 1×.', '',
    '| engine | cell | Quiver ÷ flechette | fixed-length memory | memcpy ÷ flechette | floor ÷ flechette | flechette ÷ itself |',
    '|---|---|---|---|---|---|---|', ...rows, '',
    ...(noise.length > 0 ? ['flechette ÷ itself in every cell of the suite:', '', ...noise, ''] : [])];
}

/** flechette's second timing over its first, in each accessor cell that has both. */
const sameCodeRatios = (run) => (run.report.accessors ?? [])
  .filter((r) => r.name === 'flechette again')
  .map((r) => r.ns / accessor(run, r.rows, r.cell, 'flechette'))
  .filter(Number.isFinite);

// --- What the Flight figures say about themselves --------------------------------------------

const cores = cpus().length;
const pct = (v) => `${fmt(100 * v, 0)}%`;

/** The gap between the gateway's raw delivery and the bare server, and what it went to. */
function rawGap() {
  if (flightSizes.length === 0) return [];
  return flightSizes.map((rows) => {
    const bare = flight('bare', rows);
    const raw = flight('raw', rows);
    // CPU seconds per second of the raw transfer: cores the gateway and upstream kept busy.
    const gbPerS = raw.mibPerS * 2 ** 20 / 1e9;
    const gatewayCores = raw.gatewayCpuPerGB * gbPerS;
    const upstreamCores = raw.upstreamCpuPerGB * gbPerS;
    const saturated = raw.machineBusy >= 0.9;
    const cause = saturated
      ? `the machine's ${cores} cores were ${pct(raw.machineBusy)} busy during the raw transfers, and the gateway and its upstream `
        + `kept ${fmt(gatewayCores + upstreamCores, 2)} cores busy (gateway ${fmt(gatewayCores, 2)}, pyarrow ${fmt(upstreamCores, 2)}) `
        + 'that the bare server, which sends from memory, leaves to the browser'
      : `the machine was ${pct(raw.machineBusy)} busy, so not CPU: the gateway forwards a batch only once the upstream `
        + 'has sent all of it, where the bare server sends from memory (docs/flight-cost.md); both wait for the same credit';
    return `- ${rows} rows/batch: raw ${fmt(raw.mibPerS, 0)} MiB/s against the bare server's ${fmt(bare.mibPerS, 0)} `
      + `(${x(raw.mibPerS / bare.mibPerS)}); ${cause}.`;
  });
}

/**
 * Decoded DoGet against the gateway's raw delivery, beside the same decode from the bare
 * server, where no gateway or upstream shares the cores: the part of the gap that is the
 * page's own work.
 */
function decodeGap() {
  return flightSizes.map((rows) => {
    const [bare, bareDecoded, raw, decoded] = FLIGHT_MODES.map((mode) => flight(mode, rows));
    return `- ${rows} rows/batch: decoded ${fmt(decoded.mibPerS, 0)} MiB/s, ${x(decoded.mibPerS / raw.mibPerS)} the gateway's raw `
      + `delivery. From the bare server, with no gateway or upstream on the cores, decoded runs at `
      + `${x(bareDecoded.mibPerS / bare.mibPerS)} the ${fmt(bare.mibPerS, 0)} MiB/s that the page receives undecoded: `
      + 'that part of the gap is the page\'s own work on its one thread (the one copy of each byte into wasm memory, '
      + 'the checks, a promise per batch).';
  });
}

/** fetchAll over 4 sockets against 1, and why where 4 is not faster. */
function fetchAllLine() {
  if (!chromium.report.flight?.some((r) => r.connections)) return [];
  const [one, four] = [1, 4].map((n) => bestFetchAll(chromium.report.flight, n));
  const ratio = four.mibPerS / one.mibPerS;
  let why = '';
  if (ratio < 1.05) {
    const decoded = flight('decoded', 65536);
    why = one.machineBusy >= 0.9
      ? `: no faster, since the machine's ${cores} cores were already ${pct(one.machineBusy)} busy over 1 socket, `
        + 'and more sockets add no CPU; decoding runs on the page\'s one thread either way'
      : `: no faster, since decoding runs on the page's one thread, which 1 socket already kept busy `
        + `(${fmt(one.mibPerS, 0)} MiB/s, ${x(one.mibPerS / decoded.mibPerS)} a single decoded DoGet at 65536 rows)`;
  }
  return [`- fetchAll over 4 sockets: ${fmt(four.mibPerS, 0)} MiB/s, ${x(ratio)} the ${fmt(one.mibPerS, 0)} MiB/s over 1 socket${why}.`];
}

// --- Each engine's ratios ----------------------------------------------------------------

const noneRatio = (run, name, rows, mode = '64k') => reader(run, 'none', rows, mode, name) / reader(run, 'none', rows, mode, 'quiver');
const writerRatio = (run, rows) => {
  const [q, a, f] = ['quiver', 'arrowjs', 'flechette'].map((n) => writer(run, 'none', rows, n)?.usPerBatch);
  return Math.min(a, f) / q;
};
const overSizes = (f) => (run) => range(SIZES.map((rows) => f(run, rows)));

/**
 * The summary's works: the suite each comes from, what it does, against whom, and the
 * ratio text for one engine's run (peer's time over Quiver's), or undefined where that run
 * has no such rows (the zstd-c flavour without --zstd-c).
 */
const WORKS = [
  ['reader', 'decode, uncompressed', 'Arrow JS\'s async reader', overSizes((run, rows) => noneRatio(run, 'arrowjs', rows))],
  ['reader', 'decode, uncompressed', 'flechette', overSizes((run, rows) => noneRatio(run, 'flechette', rows))],
  ['reader', 'decode, LZ4', 'the fastest JS reader', overSizes((run, rows) => fastestJsReader(run, 'lz4', rows) / reader(run, 'lz4', rows, '64k', 'quiver'))],
  ['reader', 'decode, ZSTD', 'the fastest JS reader with fzstd', overSizes((run, rows) => fastestJsReader(run, 'zstd', rows) / reader(run, 'zstd', rows, '64k', 'quiver'))],
  // Only in a run with --zstd-c.
  ['reader', 'decode, ZSTD, zstd-c flavour', 'the fastest JS reader with fzstd', (run) => (run.report.reader.some((r) => r.name === 'quiverZstdC')
    ? overSizes((r, rows) => fastestJsReader(r, 'zstd', rows) / reader(r, 'zstd', rows, '64k', 'quiverZstdC'))(run) : undefined)],
  ['files', 'read an IPC file whole', 'flechette', overSizes((run, rows) => fileRead(run, rows, 'flechette') / fileRead(run, rows, 'quiver'))],
  ['writer', 'write, uncompressed', 'the fastest JS writer', overSizes(writerRatio)],
  ['views', 'decode and scan columns', 'flechette', overSizes((run, rows) => views(run, rows, 'flechette', 'decode+scan') / views(run, rows, 'quiver views', 'decode+scan'))],
  ['accessors', 'per-row reads (get, isValid, iteration, toArray, table.toArray)', 'flechette', (run) => range(accessorRatios(run).map((r) => 1 / r.ratio))],
  ['flight', 'Flight DoGet, decoded', 'the gateway\'s raw delivery', (run) => {
    const sizes = flightSizesIn(run);
    return `${range(sizes.map((rows) => flightIn(run, 'decoded', rows).mibPerS / flightIn(run, 'raw', rows).mibPerS))} `
      + `(${range(sizes.map((rows) => flightIn(run, 'decoded', rows).mibPerS), (v) => fmt(v, 0))} MiB/s decoded)`;
  }],
  ['flightsql', 'Flight SQL query, decoded', 'the gateway\'s raw delivery',
    (run) => `${x(flightSql(run, 'decoded') / flightSql(run, 'raw'))} (${fmt(flightSql(run, 'decoded'), 0)} MiB/s decoded)`],
  ['flightsql', 'Flight SQL query, decoded', 'arrow-flight\'s Flight SQL client, native',
    (run) => `${x(flightSql(run, 'decoded') / flightSql(run, 'native'))} (${fmt(flightSql(run, 'native'), 0)} MiB/s native)`],
];

/**
 * One row per work, one column per engine: its ratios, "did not run" where it failed the
 * work's suite (the page's engine section says why), and "–" where it was not asked to
 * run it (the writer in Firefox), so the summary stays a dozen lines however many
 * engines ran.
 */
const summaryCell = (suite, ratio, run) => {
  if (run.failed?.[suite]) return 'did not run';
  if (!run.report[suite]?.length) return '–';
  return ratio(run) ?? '–';
};
const ratioRows = WORKS
  .map(([suite, work, against, ratio]) => [work, against, ...ENGINES.map(([, run]) => summaryCell(suite, ratio, run))])
  // A work no engine ran (the zstd-c flavour without --zstd-c) has no row.
  .filter((row) => row.slice(2).some((text) => text !== '–'))
  .map((row) => `| ${row.join(' | ')} |`);
const ratioTable = [
  `| work | against | ${ENGINES.map(([engine]) => engine).join(' | ')} |`,
  `|---|---|${ENGINES.map(() => '---|').join('')}`,
  ...ratioRows,
];

// --- The page ---------------------------------------------------------------------------

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') ? ' (with uncommitted changes)' : '';
const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
const cpuModel = cpus()[0]?.model.trim() ?? 'unknown CPU';
const envs = ENGINES.map(([, run]) => run.env).filter(Boolean).join(', ');
const browsers = ENGINES.filter(([engine]) => engine !== 'Node').map(([engine]) => engine);
const tables = (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').trim() : '');
/** An engine's section: the suites it failed, each with its error, then its tables. */
const section = ([engine, run, file = engine.toLowerCase()]) => {
  const failures = Object.entries(run.failed).map(([suite, error]) => `**${suite} did not run in ${engine}:**\n\n\`\`\`\n${error}\n\`\`\``);
  return `## ${engine}\n\n${[...failures, tables(`${file}.md`)].filter(Boolean).join('\n\n')}\n`;
};

const targetRows = targets.map((t) => `| #${t.issue} | ${t.engine} | ${t.asks} | **${t.verdict}** | `
  + `${t.cells.map((c) => `${c.label}: ${c.figure}${c.ok === false ? ' ✗' : ''}`).join(', ')} |`);
const page = `# Benchmarks

Written by \`pkg-scripts/bench.sh\` (\`bench/report.mjs\`); do not edit by hand. Every figure
on this page comes from one run:

- **Commit:** ${commit}${dirty}
- **Date:** ${date} UTC
- **Machine:** ${cores} cores, ${cpuModel}, ${process.arch}, shared with other work (load average ${loadavg().map((l) => fmt(l, 1)).join(' / ')} over the last 1 / 5 / 15 minutes of the run), so read the ratios, which compare contenders timed in the same interleaved rounds
- **Duration:** ${process.env.BENCH_SECONDS ? `${fmt(process.env.BENCH_SECONDS / 60, 0)} minutes for the whole of \`bench.sh\`, builds included` : 'not recorded'}
- **Engines:** ${envs}; each browser (${browsers.join(', ')}) started directly, with no devtools client attached (\`bench/launch.mjs\`), and timed against apache-arrow JS and flechette in the same engine; Firefox and WebKit run the reading, column-access and Flight suites, not the writer or Flight SQL

How each suite measures is in [CONTRIBUTING.md](../CONTRIBUTING.md#benchmarks).

## Ratios in each engine

Each ratio is the peer's time over Quiver's, over 100 to 8192 rows per batch: above 1×
Quiver is faster.

${ratioTable.join('\n')}

## Targets

Each issue's targets, computed from the tables below (✗ marks a cell that misses).

| issue | engine | target | result | cells |
|---|---|---|---|---|
${targetRows.join('\n')}

${missedReadRows().join('\n')}
## Flight: where the bytes go

${[...rawGap(), ...decodeGap(), ...fetchAllLine()].join('\n') || 'The flight suite did not run in Chromium.'}

${[...ENGINES, ...(chromiumFixed.ran ? [['Chromium (fixed-length memory)', chromiumFixed, 'chromium-fixed']] : [])].map(section).join('\n')}${tables('native.md') ? `\n## Native\n\n${tables('native.md')}\n` : ''}`;
writeFileSync(outFile, page);

// --- The README's summary ------------------------------------------------------------------

if (readmeFlag === '--readme') {
  const met = targets.filter((t) => t.verdict === 'met').length;
  const summary = [
    `From the run of ${date.slice(0, 10)} on ${commit} (${envs}), 100 to 8192 rows per batch.`,
    'Each ratio is the peer\'s time over Quiver\'s, in the same engine: above 1× Quiver is',
    'faster. Every table, and each target met or not, is in [docs/benchmarks.md](docs/benchmarks.md).',
    '',
    ...ratioTable,
    '',
    `Targets met: ${met} of ${targets.length}.`,
  ];
  const readme = readFileSync(readmeFile, 'utf8');
  const begin = '<!-- benchmark summary: written by pkg-scripts/bench.sh -->';
  const end = '<!-- end of benchmark summary -->';
  const [a, b] = [readme.indexOf(begin), readme.indexOf(end)];
  if (a < 0 || b < a) throw new Error(`${readmeFile} has no "${begin}" ... "${end}" markers`);
  writeFileSync(readmeFile, `${readme.slice(0, a + begin.length)}\n${summary.join('\n')}\n${readme.slice(b)}`);
}
