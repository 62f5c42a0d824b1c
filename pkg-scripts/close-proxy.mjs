// An HTTP forward proxy for the wasm-bindgen-test steps in a browser (wasm-test-browser.sh). It
// forwards each request for a loopback address on a new connection that closes after the
// response (and refuses any other), and prints its port, then one line per request.
//
// Why: wasm-bindgen-test-runner 0.2.130 serves the test page with tiny_http 0.12, whose
// worker pool starts with 4 threads and holds a thread for each keep-alive connection
// until it closes. A new connection is queued for an idle thread when the pool counts
// one, and the count drops only once that thread wakes. Chromium opens several
// connections at once for the page's JS modules; when more are queued than threads were
// idle, one is never read, and the page waits out the runner's 300 s page-load timeout
// (seen with `ss`: the request sits unread in the server socket's receive queue). Through
// this proxy every connection to the runner ends with its response, so its thread
// returns to the pool and picks up the next.
import http from 'node:http';

// Hop-by-hop headers belong to one connection and are not forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

function endToEnd(headers) {
  const kept = { ...headers };
  for (const name of HOP_BY_HOP) delete kept[name];
  return kept;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const server = http.createServer((req, res) => {
  console.log(`${req.method} ${req.url}`);
  if (!URL.canParse(req.url) || !LOOPBACK.has(new URL(req.url).hostname)) {
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end('close-proxy: forwards requests for loopback addresses only');
    return;
  }
  const upstream = http.request(req.url, {
    method: req.method,
    headers: { ...endToEnd(req.headers), connection: 'close' },
    agent: false,
  }, (response) => {
    res.writeHead(response.statusCode, endToEnd(response.headers));
    response.pipe(res);
  });
  upstream.on('error', (error) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`close-proxy: ${error.message}`);
  });
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
