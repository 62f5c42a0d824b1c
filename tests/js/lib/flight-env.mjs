// Starts the real processes the Flight client tests and benchmark talk to, all on
// 127.0.0.1 with ephemeral ports: pyarrow Flight servers (gateway/tests/flight_server.py,
// bench/flight_upstream.py), the Flight SQL fixture (tests/fixtures/flight-sql-server),
// quiver-gateway binaries (built with cargo first), and listeners that count the
// connections made to them. Used by tests/js/flight*.test.js, tests/browser/run.mjs and
// bench/browser.mjs. Everything is killed by stop(), and on exit.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const START_TIMEOUT_MS = 30_000;
const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A child process whose stdout/stderr lines are kept, to wait for one. */
function launch(command, args, stream) {
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines = [];
  const waiters = new Set();
  const onLine = (line) => {
    lines.push(line);
    for (const w of waiters) w();
  };
  createInterface({ input: child[stream] }).on('line', onLine);
  // The other stream is drained so that the child never blocks on a full pipe.
  child[stream === 'stdout' ? 'stderr' : 'stdout'].resume();
  /** Resolves with the first line (seen or future) matching `pattern`, or null after `ms`. */
  const waitFor = (pattern, ms) => new Promise((done) => {
    const check = () => {
      const hit = lines.find((l) => pattern.test(l));
      if (hit !== undefined) {
        waiters.delete(check);
        clearTimeout(timer);
        done(hit);
      }
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      done(null);
    }, ms);
    waiters.add(check);
    check();
  });
  const stop = () => new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
  return { child, waitFor, stop };
}

/**
 * Starts the pyarrow Flight server `script` (one that prints `PORT <n>` and exits after
 * `--lifetime` seconds) with `args`; resolves with its location and pid.
 */
export async function pythonServer(args, { script = 'gateway/tests/flight_server.py', lifetime = 600 } = {}) {
  const python = process.env.QUIVER_PYTHON ?? resolve(root, '.venv/bin/python');
  const p = launch(python, [script, '--lifetime', String(lifetime), ...args], 'stdout');
  const line = await p.waitFor(/^PORT \d+$/, START_TIMEOUT_MS);
  if (!line) throw new Error(`${script} ${args.join(' ')} did not start (run pkg-scripts/setup.sh)`);
  const location = `grpc://127.0.0.1:${line.slice(5)}`;
  return {
    location,
    pid: p.child.pid,
    /** Whether the server printed `line` within `ms`. */
    saw: async (text, ms) => (await p.waitFor(new RegExp(`^${text}$`), ms)) !== null,
    /** The first line the server printed matching `pattern` within `ms`, or null. */
    line: p.waitFor,
    stop: p.stop,
  };
}

/**
 * A TCP listener on 127.0.0.1 that closes each connection as it accepts it, as a server
 * going down does, and counts them: `dials()`. Resolves with its `grpc://` location.
 */
export async function countingListener() {
  let dials = 0;
  const server = createServer((socket) => {
    dials++;
    socket.destroy();
  });
  await new Promise((done, fail) => server.once('error', fail).listen(0, '127.0.0.1', done));
  return {
    location: `grpc://127.0.0.1:${server.address().port}`,
    dials: () => dials,
    stop: () => new Promise((done) => server.close(() => done())),
  };
}

/** A `grpc://` location on 127.0.0.1 where nothing listens: a port just freed. */
export async function deadLocation() {
  const listener = await countingListener();
  await listener.stop();
  return listener.location;
}

/** Builds quiver-gateway (a no-op when it is fresh) and returns the binary's path. */
export function buildGateway({ release = false } = {}) {
  execFileSync('cargo', ['build', '-q', '-p', 'quiver-gateway', ...(release ? ['--release'] : [])], {
    cwd: root,
    stdio: 'inherit',
  });
  const dir = process.env.CARGO_TARGET_DIR ?? resolve(root, 'target');
  return resolve(dir, release ? 'release' : 'debug', 'quiver-gateway');
}

/** Starts a gateway with `args`; resolves with its ws:// URL and pid. */
export async function startGateway(binary, args) {
  const g = launch(binary, ['--listen', '127.0.0.1:0', ...args], 'stderr');
  const line = await g.waitFor(/^quiver-gateway: ws:\/\/.*\/flight/, START_TIMEOUT_MS);
  if (!line) throw new Error(`quiver-gateway ${args.join(' ')} did not start`);
  return { url: line.match(/ws:\/\/\S+\/flight/)[0], pid: g.child.pid, stop: g.stop };
}

/**
 * The test setup:
 * - `gateway`: upstream `main` (a pyarrow server whose ["parts"] flight has one endpoint
 *   on itself and one on `peer`); it may also dial `peer`, `lz4`, `zstd` and `token`, and
 *   allows the page origin `origin` (if given);
 * - `strictGateway`: a `--demo` gateway that allows no cross-origin page;
 * - `demoGateway`: a `--demo` gateway that allows `origin` (its long-running queries);
 * - `servers`: each server's location, and `saw(line, ms)` on `main`'s output.
 */
export async function startFlightEnv({ origin, release = false } = {}) {
  const binary = buildGateway({ release });
  const stoppers = [];
  try {
    const start = async (args) => {
      const s = await pythonServer(args);
      stoppers.push(s.stop);
      return s;
    };
    const [peer, lz4, zstd, token] = await Promise.all([
      start([]),
      start(['--compression', 'lz4']),
      start(['--compression', 'zstd']),
      start(['--token', 's3cret']),
    ]);
    const main = await start(['--peer', peer.location]);
    const allowed = [peer, lz4, zstd, token].flatMap((s) => ['--allow-location', s.location]);
    const gateway = await startGateway(binary, [
      '--upstream', main.location, ...allowed, ...(origin ? ['--allow-origin', origin] : []),
    ]);
    stoppers.push(gateway.stop);
    const strict = await startGateway(binary, ['--demo']);
    stoppers.push(strict.stop);
    const demo = await startGateway(binary, ['--demo', ...(origin ? ['--allow-origin', origin] : [])]);
    stoppers.push(demo.stop);
    return {
      gateway: gateway.url,
      strictGateway: strict.url,
      demoGateway: demo.url,
      servers: { main: main.location, peer: peer.location, lz4: lz4.location, zstd: zstd.location, token: token.location },
      saw: main.saw,
      stop: () => Promise.all(stoppers.map((s) => s())),
    };
  } catch (error) {
    await Promise.all(stoppers.map((s) => s()));
    throw error;
  }
}

const sqlFixture = resolve(root, 'tests/fixtures/flight-sql-server');

/**
 * Builds a package of the Flight SQL fixture's workspace (a no-op when fresh) in its own
 * target dir, and returns the path of its binary: the server (datafusion-flight-sql-server),
 * or `flight-sql-read`, the benchmark's native client (`reader/`), in release if asked.
 */
export function buildFlightSqlFixture({ bin = 'quiver-flight-sql-fixture', release = false } = {}) {
  const target = resolve(sqlFixture, 'target');
  const args = ['build', '-q', '--locked', '--manifest-path', resolve(sqlFixture, 'Cargo.toml'), '-p', bin];
  execFileSync('cargo', [...args, ...(release ? ['--release'] : [])], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CARGO_TARGET_DIR: target },
  });
  return resolve(target, release ? 'release' : 'debug', bin);
}

/**
 * Starts the fixture binary `fixture` serving (`args`: `--bench` adds the benchmark's
 * table); resolves with its location and pid.
 */
export async function startFlightSqlServer(fixture, args = []) {
  const server = launch(fixture, ['serve', ...args], 'stdout');
  const port = await server.waitFor(/^\d+$/, START_TIMEOUT_MS);
  if (!port) {
    await server.stop();
    throw new Error(`${fixture} serve ${args.join(' ')} did not print its port`);
  }
  return { location: `grpc://127.0.0.1:${port}`, pid: server.child.pid, stop: server.stop };
}

/**
 * The Flight SQL setup: the fixture server and a gateway in front of it. `native(sql)`
 * runs SQL on the fixture's tables in-process, without Flight: `{ rows }` as JSON, or
 * `{ error }`, the error as DataFusion words it.
 */
export async function startFlightSqlEnv() {
  const fixture = buildFlightSqlFixture();
  const binary = buildGateway();
  const server = await startFlightSqlServer(fixture);
  let gateway;
  try {
    gateway = await startGateway(binary, ['--upstream', server.location]);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const native = (sql) => {
    try {
      return { rows: JSON.parse(execFileSync(fixture, ['query', sql], { encoding: 'utf8', stdio: 'pipe' })) };
    } catch (error) {
      return { error: error.stderr.trim().replace(/^Error: /, '') };
    }
  };
  return {
    gateway: gateway.url,
    location: server.location,
    native,
    stop: () => Promise.all([gateway.stop(), server.stop()]),
  };
}
