// Opens a benchmark page in a browser that no devtools client is attached to, and
// returns what the page reports over plain HTTP. Playwright and any CDP client turn on
// network events, and Chromium then reports every WebSocket frame to the client: its
// WebSocket receive fell from 200-400 MiB/s to 55-65 MiB/s that way (issue 28), so no
// figure is taken from an instrumented page.
//
// The page learns the endpoint from its `?report=` parameter and calls:
// - POST `${report}log` with a line of text, printed on stderr;
// - POST `${report}result` with the JSON of its results, which ends the run;
// - GET `${report}<route>?k=v` for a route the caller serves (`routes`), which is called
//   with the query's parameters as an object and answered as JSON.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

// Firefox preferences for a test or benchmark profile: no first-run pages, telemetry,
// updates or background requests that would compete with the page for the two cores.
const FIREFOX_PREFS = {
  'browser.shell.checkDefaultBrowser': false,
  'browser.startup.homepage_override.mstone': 'ignore',
  'browser.aboutwelcome.enabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'datareporting.healthreport.uploadEnabled': false,
  'toolkit.telemetry.enabled': false,
  'app.update.enabled': false,
  'app.normandy.enabled': false,
  'extensions.update.enabled': false,
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'browser.search.update': false,
  // A page that blocks on a long synchronous test is not "unresponsive" here.
  'dom.max_script_run_time': 0,
};

/**
 * How to start each engine: the command and its arguments, from the binary, a fresh
 * profile directory and the page's URL.
 */
const ENGINES = {
  chromium: async (browser, profile, url) => [browser, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`, url,
  ]],
  firefox: async (browser, profile, url) => {
    const prefs = Object.entries(FIREFOX_PREFS).map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});\n`);
    await writeFile(join(profile, 'user.js'), prefs.join(''));
    return [browser, ['--headless', '--profile', profile, '--no-remote', url]];
  },
  // WebKitGTK's MiniBrowser has no headless mode: xvfb-run gives it a display of its own
  // (-a: the first free one). Its profile lives under XDG_DATA_HOME/XDG_CACHE_HOME, which
  // launch() points at the fresh directory.
  webkit: async (browser, profile, url) => ['xvfb-run', ['-a', browser, url]],
};

/** The engine a browser binary runs, from its file name. */
export function engineOf(browser) {
  const name = basename(browser);
  if (/chrom/i.test(name)) return 'chromium';
  if (/firefox/i.test(name)) return 'firefox';
  if (name === 'MiniBrowser') return 'webkit';
  throw new Error(`bench/launch.mjs knows no flags for ${browser}: expected a chromium, firefox or MiniBrowser binary`);
}

/** Reads a request's body as text. */
async function bodyOf(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

/**
 * Runs `url` in `browser` (the path of the binary) with a fresh profile and resolves with
 * the object the page POSTs to `result`. Rejects if the page reports `{ error }`, if the
 * browser exits first, or after `timeoutMs`. `routes` maps a path ('cpu') to a function
 * whose return value is sent back as JSON; `env` adds environment variables for the
 * browser (JSC_* options for WebKit); `idleMs`, if given, is how long the page may go
 * without logging a line before it counts as hung. The browser and the endpoint are gone
 * when the promise settles.
 */
export async function launch(browser, url, { routes = {}, timeoutMs = 60 * 60_000, idleMs, env = {} } = {}) {
  const engine = ENGINES[engineOf(browser)];
  const profile = await mkdtemp(join(tmpdir(), 'quiver-launch-'));
  let settle;
  const done = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  let idle;
  const awake = () => {
    if (!idleMs) return;
    clearTimeout(idle);
    idle = setTimeout(() => settle.reject(new Error(`the page logged nothing for ${idleMs / 1000} s: it hung`)), idleMs);
  };
  awake();
  // The page is cross-origin isolated and served from another port: every answer allows
  // any origin, and text/plain bodies keep the POSTs free of preflight requests.
  const cors = { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' };
  const server = createServer(async (req, res) => {
    const request = new URL(req.url, 'http://localhost');
    const route = request.pathname.slice(1);
    try {
      if (req.method === 'POST' && route === 'log') {
        awake();
        process.stderr.write(`${await bodyOf(req)}\n`);
        res.writeHead(204, cors).end();
      } else if (req.method === 'POST' && route === 'result') {
        const result = JSON.parse(await bodyOf(req));
        res.writeHead(204, cors).end();
        if (result.error) settle.reject(new Error(`the page failed: ${result.error}`));
        else settle.resolve(result);
      } else if (req.method === 'GET' && routes[route]) {
        res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(await routes[route](Object.fromEntries(request.searchParams))));
      } else {
        res.writeHead(404, cors).end(`no route ${req.method} /${route}\n`);
      }
    } catch (error) {
      res.writeHead(500, cors).end(String(error));
      settle.reject(error);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const report = `http://127.0.0.1:${server.address().port}/`;
  const page = new URL(url);
  page.searchParams.set('report', report);
  // Its own process group, so that the renderer and helper processes end with it.
  const [command, args] = await engine(browser, profile, page.href);
  const child = spawn(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: { ...process.env, XDG_DATA_HOME: profile, XDG_CACHE_HOME: profile, ...env },
  });
  // The browser's own stderr is kept for an early exit's message only.
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  child.on('error', (e) => settle.reject(new Error(`could not start ${browser}: ${e.message}`)));
  child.on('exit', (code, signal) =>
    settle.reject(new Error(`${browser} exited (${signal ?? code}) before the page reported a result:\n${stderr}`)));
  const timer = setTimeout(() => settle.reject(new Error(`no result from the page after ${timeoutMs} ms`)), timeoutMs);
  try {
    return await done;
  } finally {
    clearTimeout(timer);
    clearTimeout(idle);
    child.removeAllListeners('exit');
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(profile, { recursive: true, force: true });
  }
}
