// In-page side of bench/browser.mjs: loads the workload over HTTP, runs the suites named
// in ?suites= in whichever engine opened it (?engine= names it), and POSTs { env, report,
// tables, failed } to the endpoint of bench/launch.mjs (?report=), with its log lines on
// the way.
import init, * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import * as flechette from '@uwdata/flechette';
import * as fzstd from 'fzstd';
import { registerCodecs } from './codecs.js';
import { QUICK, suites } from './suites.js';

// lz4js is CommonJS; a ten-line loader is cheaper than a bundler here.
async function requireCommonJS(url, cache = {}) {
  if (cache[url]) return cache[url].exports;
  const module = (cache[url] = { exports: {} });
  const source = await (await fetch(url)).text();
  const deps = {};
  for (const [, dep] of source.matchAll(/require\('(\.\/[^']+)'\)/g)) {
    deps[dep] = await requireCommonJS(new URL(dep, url).href, cache);
  }
  new Function('module', 'exports', 'require', source)(module, module.exports, (d) => deps[d]);
  return module.exports;
}

const params = new URLSearchParams(location.search);
const endpoint = params.get('report');
// text/plain bodies: simple requests, with no preflight to the endpoint's other origin.
const post = (route, body) => fetch(`${endpoint}${route}`, { method: 'POST', body });
// Log lines in order, each after the one before reached the endpoint.
let logged = Promise.resolve();
const log = (line) => {
  logged = logged.then(() => post('log', line));
};

async function main() {
  // ?memory=fixed (BENCH_MEMORY=fixed): `init({ resizableMemory: false })`, which leaves wasm
  // memory a fixed-length buffer, to measure what the resizable one costs (issue 32).
  const memoryOptions = { resizableMemory: params.get('memory') !== 'fixed' };
  await init(memoryOptions);
  // The zstd-c package flavour, when browser.mjs was given one (BENCH_ZSTD_C).
  const zstdC = params.get('zstdC');
  const quiverZstdC = zstdC ? await import(`/${zstdC}/web/index.js`) : undefined;
  await quiverZstdC?.default(memoryOptions);
  const lz4 = await requireCommonJS(new URL('/node_modules/lz4js/lz4.js', location.href).href);
  registerCodecs({ arrow, flechette, lz4, fzstd });
  const names = await (await fetch(`/${params.get('data')}/index.json`)).json();
  const files = {};
  for (const name of names) {
    files[name] = new Uint8Array(await (await fetch(`/${params.get('data')}/${name}.arrows`)).arrayBuffer());
  }
  // bench/browser.mjs serves the page cross-origin isolated: otherwise Chromium rounds
  // performance.now() to 100 µs, a sizeable part of a timed run of small batches.
  if (!globalThis.crossOriginIsolated) throw new Error('the benchmark page is not cross-origin isolated');
  const memory = params.get('memory') === 'fixed' ? ', fixed-length memory' : '';
  const env = `${params.get('engine')}${memory}`;
  // The gateway and bare server browser.mjs started for the flight suite, and the CPU
  // time the gateway, its upstream and the machine spent so far.
  const flight = params.get('gateway')
    ? {
      url: params.get('gateway'),
      bare: params.get('bare'),
      mib: Number(params.get('flightMiB') ?? 1024),
      cpu: async () => (await fetch(`${endpoint}cpu`)).json(),
    }
    : undefined;
  // The gateway in front of the Flight SQL fixture, and arrow-flight's native client run
  // by browser.mjs, for the flightsql suite.
  const sql = params.get('sqlGateway')
    ? {
      url: params.get('sqlGateway'),
      mib: Number(params.get('sqlMiB') ?? 256),
      native: async (query) => (await fetch(`${endpoint}sqlNative?${new URLSearchParams({ sql: query })}`)).json(),
    }
    : undefined;
  const report = {};
  const tables = [];
  // A suite that fails in this engine is reported as failed, with its error, and the next
  // one still runs: the report names every gap rather than leaving it out.
  const failed = {};
  const quick = params.has('quick') ? QUICK : {};
  for (const name of params.get('suites').split(',')) {
    const suite = suites[name];
    try {
      report[name] = await suite.run({ quiver, quiverZstdC, arrow, flechette }, files, { ...quick, log: (m) => log(`[${name}] ${m}`), flight, sql });
      tables.push(suite.tables(report[name], env));
    } catch (e) {
      failed[name] = String(e && e.message ? e.message : e);
      log(`[${name}] failed: ${e && e.stack ? e.stack : e}`);
    }
  }
  return { env, report, tables, failed };
}

main()
  .catch((e) => ({ error: String(e && e.stack ? e.stack : e) }))
  .then(async (result) => {
    await logged;
    await post('result', JSON.stringify(result));
  });
