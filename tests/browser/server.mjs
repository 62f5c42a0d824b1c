// A static file server on 127.0.0.1 for browser tests, benchmarks and the demo. It serves
// one folder (the repo) with the MIME types browsers insist on (application/wasm for
// WebAssembly.instantiateStreaming, text/javascript for modules) and never caches. A
// folder is its index.html or, without one, the JSON array of its entries' names (the
// browser tests list fuzz/regressions/ that way). `?pace=BYTES` sends a file in writes of
// BYTES bytes, 10 ms apart, so that a page's fetch body arrives in several chunks.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Serves `root` on 127.0.0.1 at `port` (0: any free port).
 * Returns `{ url, close }`; `url` ends with a slash.
 *
 * `isolated` sends the headers that make pages cross-origin isolated, where Chromium's
 * performance.now() is precise to 5 µs instead of 100 µs (the benchmarks time runs of a
 * few hundred µs).
 */
export async function serve(root, port = 0, { isolated = false } = {}) {
  const isolation = isolated
    ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }
    : {};
  const base = normalize(root + sep);
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const path = decodeURIComponent(url.pathname);
    const file = normalize(join(base, path));
    // Refuse `..` escapes out of root.
    if (!file.startsWith(base) && file + sep !== base) {
      res.writeHead(403).end();
      return;
    }
    try {
      const info = await stat(file);
      if (info.isDirectory() && !(await stat(join(file, 'index.html')).catch(() => null))) {
        res.writeHead(200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store', ...isolation })
          .end(JSON.stringify(await readdir(file)));
        return;
      }
      const target = info.isDirectory() ? join(file, 'index.html') : file;
      const size = info.isDirectory() ? (await stat(target)).size : info.size;
      res.writeHead(200, {
        'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
        'content-length': size,
        'cache-control': 'no-store',
        ...isolation,
      });
      const pace = Number(url.searchParams.get('pace'));
      if (pace > 0) await paced(res, await readFile(target), pace);
      else createReadStream(target).pipe(res);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}\n`);
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function paced(res, bytes, size) {
  for (let at = 0; at < bytes.length; at += size) {
    if (at > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    res.write(bytes.subarray(at, at + size));
  }
  res.end();
}
