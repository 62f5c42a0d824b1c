// A page in headless Firefox driven through geckodriver's W3C WebDriver HTTP API, with the
// few playwright Page methods tests/e2e/demo.mjs uses: goto, evaluate, waitForFunction,
// click, fill, selectOption and screenshot. Playwright cannot drive Debian's firefox-esr;
// geckodriver (cargo install, pkg-scripts/setup.sh) can. Clicks and typing go through
// WebDriver's element commands, so the page sees real input events.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { browserFor } from '../../bench/engines.mjs';

/** A free port on 127.0.0.1. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts geckodriver and a headless firefox-esr session; returns `{ browser, page }`. */
export async function firefoxPage({ width, height }) {
  const port = await freePort();
  const driver = spawn('geckodriver', ['--port', String(port), '--host', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  driver.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const base = `http://127.0.0.1:${port}`;
  async function command(method, path, body) {
    const response = await fetch(base + path, {
      method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body),
    });
    const { value } = await response.json();
    if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${value.error}: ${value.message}`);
    return value;
  }
  // Until geckodriver answers, for at most 10 s.
  for (let started = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    if (await fetch(`${base}/status`).then((r) => r.ok, () => false)) break;
    if (Date.now() - started > 10_000) throw new Error(`geckodriver did not start:\n${stderr}`);
  }
  const { sessionId } = await command('POST', '/session', {
    capabilities: { alwaysMatch: { 'moz:firefoxOptions': { binary: browserFor('firefox'), args: ['-headless'] } } },
  });
  const session = (method, path, body) => command(method, `/session/${sessionId}${path}`, body);
  await session('POST', '/window/rect', { width, height });
  await session('POST', '/timeouts', { script: 120_000 });

  const element = async (selector) =>
    Object.values(await session('POST', '/element', { using: 'css selector', value: selector }))[0];
  const evaluate = (fn, arg) =>
    session('POST', '/execute/sync', { script: `return (${fn})(arguments[0]);`, args: [arg ?? null] });
  const page = {
    goto: (url) => session('POST', '/url', { url }),
    evaluate,
    async waitForFunction(fn, arg, { timeout = 30_000 } = {}) {
      for (const started = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
        if (await evaluate(fn, arg)) return;
        if (Date.now() - started > timeout) throw new Error(`waitForFunction timed out after ${timeout} ms: ${fn}`);
      }
    },
    click: async (selector) => session('POST', `/element/${await element(selector)}/click`, {}),
    async fill(selector, text) {
      const id = await element(selector);
      await session('POST', `/element/${id}/clear`, {});
      await session('POST', `/element/${id}/value`, { text });
    },
    /** Clicks the option whose value is `value` (an option without a value attribute has its text). */
    async selectOption(selector, value) {
      const options = await session('POST', `/element/${await element(selector)}/elements`, { using: 'css selector', value: 'option' });
      for (const option of options.map((o) => Object.values(o)[0])) {
        if (await session('GET', `/element/${option}/property/value`) === value) {
          await session('POST', `/element/${option}/click`, {});
          return;
        }
      }
      throw new Error(`${selector} has no option ${value}`);
    },
    async screenshot({ path, fullPage }) {
      const png = await session('GET', fullPage ? '/moz/screenshot/full' : '/screenshot');
      await writeFile(path, Buffer.from(png, 'base64'));
    },
  };
  const browser = {
    async close() {
      await session('DELETE', '').catch(() => {});
      driver.kill('SIGTERM');
    },
  };
  return { browser, page };
}
