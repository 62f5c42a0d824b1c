// What both browser runners (run.mjs through playwright, run_engine.mjs through
// bench/launch.mjs) set up around the test modules: the list of modules, a static server
// for the repo, and the servers the Flight and memory-budget modules talk to.
import { readdir } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';
import { startFlightEnv } from '../js/lib/flight-env.mjs';
import { startFakeGateway } from '../js/lib/hostile.js';
import { hostileMemoryScenarios } from '../js/lib/hostile_memory_gateway.mjs';
import { writeFileOnDisk } from './file_on_disk.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** A page gets this long to report its results. */
export const PAGE_TIMEOUT_MS = 300_000;

/** Modules that need playwright: they choose a file in an <input type=file>. */
export const PLAYWRIGHT_ONLY = ['file_input.test.js'];

/** Modules run a second time with `init({ resizableMemory: false })` (`?memory=fixed`). */
const FIXED_MEMORY_TOO = ['memory.test.js', 'columns.test.js'];
/** Engines whose wasm memory init() makes resizable; elsewhere it is fixed-length anyway. */
const RESIZABLE_MEMORY = ['chromium', 'firefox'];

/**
 * The pages to open for `files` in `engine`: `{ file, query, label }`, each module once,
 * and in an engine with resizable memory, some again over fixed-length memory.
 */
export function pageRuns(files, engine) {
  const runs = files.map((file) => ({ file, query: '', label: basename(file) }));
  if (!RESIZABLE_MEMORY.includes(engine)) return runs;
  for (const file of files.filter((f) => FIXED_MEMORY_TOO.includes(basename(f)))) {
    runs.push({ file, query: '&memory=fixed', label: `${basename(file)}, fixed-length memory` });
  }
  return runs;
}

/** The modules named in `args` (paths), or every tests/browser/*.test.js, relative to here. */
export async function testModules(args) {
  const files = args.length > 0
    ? args.map((f) => relative(here, resolve(f)))
    : (await readdir(here)).filter((f) => f.endsWith('.test.js')).sort();
  if (files.length === 0) throw new Error(`no *.test.js in ${here}`);
  return files;
}

/**
 * Starts the static server and what `files` need; `close()` stops them all.
 * - flight*: real pyarrow Flight servers and gateways that allow the page's origin (one of
 *   them allows nothing, for the forbidden-Origin test);
 * - hostile*: a fake gateway, which compresses with the Node build;
 * - file_input: a 1 GiB IPC file on disk.
 */
export async function startFixtures(files) {
  const server = await serve(resolve(here, '../..'));
  const flight = files.some((f) => basename(f).startsWith('flight'))
    ? await startFlightEnv({ origin: server.url.replace(/\/$/, '') })
    : undefined;
  const hostile = files.some((f) => basename(f).startsWith('hostile'))
    ? await startFakeGateway(hostileMemoryScenarios(await import('quiver-arrow')))
    : undefined;
  const fileOnDisk = files.some((f) => basename(f) === 'file_input.test.js')
    ? await writeFileOnDisk()
    : undefined;
  const close = async () => {
    await server.close();
    await flight?.stop();
    hostile?.close();
    await fileOnDisk?.remove();
  };
  return { server, flight, hostile, fileOnDisk, close };
}
