// Runs the benchmark suites in one browser engine (Chromium by default, or Firefox or
// WebKit), started directly with no devtools client attached (bench/launch.mjs), and
// prints markdown tables. Each suite runs in a fresh page. OUT.json gets { env, report,
// failed }: `failed` maps each suite that could not run in this engine to its error: it
// threw, its page failed, or it hung (no log line for IDLE_MS). The exit status is then 1.
// Usage: node bench/browser.mjs DATA_DIR OUT.json suite[,suite] [chromium|firefox|webkit]
// CHROMIUM, FIREFOX and MINIBROWSER name the binaries (bench/engines.mjs).
// BENCH_QUICK=1 (bench.sh --quick): few rounds and 32 MiB of Flight per cell and query.
import { execFile, execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { serve } from '../tests/browser/server.mjs';
import {
  buildFlightSqlFixture, buildGateway, pythonServer, startFlightSqlServer, startGateway,
} from '../tests/js/lib/flight-env.mjs';
import { startBareServer } from './bare_ws.mjs';
import { browserFor, versionOf } from './engines.mjs';
import { launch } from './launch.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [dataDir, outFile, suiteList = 'reader', engine = 'chromium'] = process.argv.slice(2);
const names = (await readdir(dataDir)).filter((f) => f.endsWith('.arrows')).map((f) => f.replace(/\.arrows$/, ''));
await writeFile(join(dataDir, 'index.json'), JSON.stringify(names));
const browser = browserFor(engine);
const env = versionOf(engine, browser);
const quick = !!process.env.BENCH_QUICK;
// A page that logs nothing for this long has hung: every suite logs a line per cell.
const IDLE_MS = 10 * 60_000;

const run = promisify(execFile);
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** A process's user plus system CPU seconds, all its threads, from /proc/<pid>/stat (fields 14 and 15). */
async function cpuSeconds(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** The machine's busy and total CPU ticks so far, over all cores (/proc/stat). */
async function machineTicks() {
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const ticks = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return { busy: total - ticks[3] - ticks[4], total };
}

const server = await serve(root, 0, { isolated: true });
const stops = [server.close];
try {
  const page = new URL(`${server.url}bench/index.html`);
  page.searchParams.set('data', relative(root, resolve(dataDir)));
  page.searchParams.set('engine', env);
  if (quick) page.searchParams.set('quick', '');
  // BENCH_ZSTD_C (bench.sh --zstd-c): the zstd-c package flavour, for the reader's ZSTD rows.
  if (process.env.BENCH_ZSTD_C) page.searchParams.set('zstdC', relative(root, resolve(process.env.BENCH_ZSTD_C)));
  // BENCH_MEMORY=fixed: keep wasm memory a fixed-length buffer (bench/page.js).
  if (process.env.BENCH_MEMORY) page.searchParams.set('memory', process.env.BENCH_MEMORY);
  const routes = {};
  if (suiteList.split(',').includes('flight')) {
    // A pyarrow upstream behind a release gateway that allows this origin, and the bare
    // server that replays the gateway's frames (bench/flight.js).
    const upstream = await pythonServer([], { script: 'bench/flight_upstream.py', lifetime: 4 * 3600 });
    stops.push(upstream.stop);
    const gateway = await startGateway(buildGateway({ release: true }),
      ['--upstream', upstream.location, '--allow-origin', server.url.replace(/\/$/, '')]);
    stops.push(gateway.stop);
    const bare = await startBareServer(gateway.url);
    stops.push(bare.close);
    page.searchParams.set('gateway', gateway.url);
    page.searchParams.set('bare', bare.url);
    // FLIGHT_BENCH_MIB: volume per batch size and mode of the flight suite (default 1 GiB).
    page.searchParams.set('flightMiB', process.env.FLIGHT_BENCH_MIB ?? (quick ? '32' : '1024'));
    routes.cpu = async () => ({
      gateway: await cpuSeconds(gateway.pid),
      upstream: await cpuSeconds(upstream.pid),
      ...(await machineTicks()),
    });
  }
  if (suiteList.split(',').includes('flightsql')) {
    // The Flight SQL fixture with its benchmark table, as the tests build it, behind a
    // release gateway; arrow-flight's native client is built in release (bench/flight_sql.js).
    const reader = buildFlightSqlFixture({ bin: 'flight-sql-read', release: true });
    const fixture = await startFlightSqlServer(buildFlightSqlFixture(), ['--bench']);
    stops.push(fixture.stop);
    const gateway = await startGateway(buildGateway({ release: true }),
      ['--upstream', fixture.location, '--allow-origin', server.url.replace(/\/$/, '')]);
    stops.push(gateway.stop);
    page.searchParams.set('sqlGateway', gateway.url);
    // FLIGHT_SQL_BENCH_MIB: the volume of the flightsql suite's query (default 256 MiB).
    page.searchParams.set('sqlMiB', process.env.FLIGHT_SQL_BENCH_MIB ?? (quick ? '32' : '256'));
    routes.sqlNative = async ({ sql }) =>
      JSON.parse((await run(reader, [fixture.location, sql])).stdout);
  }
  // Each suite in a page of its own: a suite cannot slow the next with what it left on
  // the heap, and an engine that hangs loses that suite alone. WebKitGTK's web process
  // twice hung at the start of a suite after 6-9 GB had piled up over the suites before
  // it in one page, with every finished suite lost when it was killed.
  const bench = { env, report: {}, tables: [], failed: {} };
  for (const name of suiteList.split(',')) {
    page.searchParams.set('suites', name);
    try {
      const result = await launch(browser, page.href, { routes, idleMs: IDLE_MS });
      bench.env = result.env;
      Object.assign(bench.report, result.report);
      Object.assign(bench.failed, result.failed);
      bench.tables.push(...result.tables);
    } catch (error) {
      bench.failed[name] = error.message;
    }
  }
  for (const [name, error] of Object.entries(bench.failed)) console.error(`[bench] ${name} did not run in ${env}: ${error}`);
  console.log(bench.tables.join('\n\n') + '\n');
  await writeFile(outFile, JSON.stringify({ env: bench.env, report: bench.report, failed: bench.failed }, null, 1));
  if (Object.keys(bench.failed).length > 0) process.exitCode = 1;
} finally {
  for (const stop of stops.reverse()) await stop();
}
