// Runs the benchmark suites in headless Debian Chromium through playwright-core and prints
// markdown tables. Usage: node bench/browser.mjs DATA_DIR OUT.json suite[,suite]
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tests/browser/server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [dataDir, outFile, suiteList = 'reader'] = process.argv.slice(2);
const names = (await readdir(dataDir)).filter((f) => f.endsWith('.arrows')).map((f) => f.replace(/\.arrows$/, ''));
await writeFile(join(dataDir, 'index.json'), JSON.stringify(names));

const server = await serve(root);
const profile = await mkdtemp(join(tmpdir(), 'quiver-bench-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim(),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await context.newPage();
  page.on('console', (m) => process.stderr.write(`${m.text()}\n`));
  const data = relative(root, resolve(dataDir));
  // BENCH_ZSTD_C (bench.sh --zstd-c): the zstd-c package flavour, for the reader's ZSTD rows.
  const zstdC = process.env.BENCH_ZSTD_C
    ? `&zstdC=${encodeURIComponent(relative(root, resolve(process.env.BENCH_ZSTD_C)))}`
    : '';
  await page.goto(`${server.url}bench/index.html?data=${encodeURIComponent(data)}&suites=${suiteList}${zstdC}`);
  await page.waitForFunction(() => window.__bench !== undefined, null, { timeout: 30 * 60_000 });
  const bench = await page.evaluate(() => window.__bench);
  if (bench.error) throw new Error(bench.error);
  console.log(bench.tables.join('\n\n') + '\n');
  await writeFile(outFile, JSON.stringify({ env: bench.env, report: bench.report }, null, 1));
} finally {
  await context.close();
  await server.close();
  await rm(profile, { recursive: true, force: true });
}
