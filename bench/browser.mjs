// Runs the benchmark suites in headless Debian Chromium through playwright-core and prints
// markdown tables. Usage: node bench/browser.mjs DATA_DIR OUT.json suite[,suite]
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { serve } from '../tests/browser/server.mjs';
import { buildGateway, startGateway } from '../tests/js/lib/flight-env.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [dataDir, outFile, suiteList = 'reader'] = process.argv.slice(2);
const names = (await readdir(dataDir)).filter((f) => f.endsWith('.arrows')).map((f) => f.replace(/\.arrows$/, ''));
await writeFile(join(dataDir, 'index.json'), JSON.stringify(names));

const server = await serve(root, 0, { isolated: true });
// The flight suite reads from a release `quiver-gateway --demo` that allows this origin.
const gateway = suiteList.split(',').includes('flight')
  ? await startGateway(buildGateway({ release: true }), ['--demo', '--allow-origin', server.url.replace(/\/$/, '')])
  : undefined;
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
/** The gateway's user plus system CPU seconds, from /proc/<pid>/stat (fields 14 and 15). */
function gatewayCpuSeconds() {
  const stat = readFileSync(`/proc/${gateway.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}
const profile = await mkdtemp(join(tmpdir(), 'quiver-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim(),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await context.newPage();
  if (gateway) await page.exposeFunction('__gatewayCpuSeconds', gatewayCpuSeconds);
  page.on('console', (m) => process.stderr.write(`${m.text()}\n`));
  const data = relative(root, resolve(dataDir));
  // BENCH_ZSTD_C (bench.sh --zstd-c): the zstd-c package flavour, for the reader's ZSTD rows.
  const zstdC = process.env.BENCH_ZSTD_C
    ? `&zstdC=${encodeURIComponent(relative(root, resolve(process.env.BENCH_ZSTD_C)))}`
    : '';
  // FLIGHT_BENCH_MIB: volume per batch size and mode of the flight suite (default 1 GiB).
  const flight = gateway
    ? `&gateway=${encodeURIComponent(gateway.url)}&flightMiB=${process.env.FLIGHT_BENCH_MIB ?? 1024}`
    : '';
  await page.goto(`${server.url}bench/index.html?data=${encodeURIComponent(data)}&suites=${suiteList}${flight}${zstdC}`);
  await page.waitForFunction(() => window.__bench !== undefined, null, { timeout: 30 * 60_000 });
  const bench = await page.evaluate(() => window.__bench);
  if (bench.error) throw new Error(bench.error);
  console.log(bench.tables.join('\n\n') + '\n');
  await writeFile(outFile, JSON.stringify({ env: bench.env, report: bench.report }, null, 1));
} finally {
  await context.close();
  await server.close();
  await gateway?.stop();
  await rm(profile, { recursive: true, force: true });
}
