// The demo page: a DoGet through the gateway, decoded as each frame arrives by Quiver's
// FlightClient in a worker (worker.js), so that decoding never holds up the page; graphs
// throughput and wasm allocation per batch live, then draws the comparison panels, also
// measured in the worker.
import { gatewayUrl } from './wire.js';
import { allocationChart, bytes, el, fmt, throughputChart } from './charts.js';
import { drawDecoders, drawWriters } from './compare.js';

const $ = (id) => document.getElementById(id);
const MiB = 1024 * 1024;
/** The decode panel holds a stream's frames in memory; a longer stream skips it. */
const COMPARE_BYTES = 256 * MiB;
/** Throughput is measured over the last this many batches. */
const WINDOW = 10;

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const throughput = throughputChart($('throughput'));
const allocation = allocationChart($('allocation'));
// The state of the latest run, for the end-to-end test and the curious (console).
const demo = { state: 'idle', run: undefined, charts: { throughput, allocation } };
window.quiverDemo = demo;

$('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  start();
});
$('stop').addEventListener('click', () => worker.postMessage({ type: 'stop' }));
worker.addEventListener('error', (event) => {
  showError(`The page's worker failed: ${event.message ?? 'it did not load'}. Reload the page.`);
  demo.state = 'failed';
  setRunning(false);
});

/**
 * Resolves with the worker's next message of `type`, handing the others to `each`. Records
 * in `demo.run.longestHandlerMs` the longest time the page spent on one message: the only
 * work of the page's own that a stream causes, so it bounds how long decoding holds up
 * input (the issue asks for at most a frame).
 */
function next(type, each = () => {}) {
  return new Promise((resolve) => {
    worker.onmessage = ({ data }) => {
      const began = performance.now();
      if (data.type === type) resolve(data);
      else each(data);
      const run = demo.run;
      if (run) run.longestHandlerMs = Math.max(run.longestHandlerMs, performance.now() - began);
    };
  });
}

async function start() {
  const rows = Number($('rows').value);
  const batches = Number($('dataset').value);
  const compression = $('compression').value;
  const ticket = `rows=${rows}&batches=${batches}&compression=${compression}`;
  let url;
  try {
    url = gatewayUrl($('gateway').value);
  } catch {
    return showError(`"${$('gateway').value}" is not a gateway address; write host:port or ws://host:port/flight.`);
  }
  showError(undefined);
  setRunning(true);
  throughput.reset();
  allocation.reset();
  for (const id of ['decode', 'writer']) $(id).replaceChildren(el('p', 'note', 'Runs after a stream ends.'));
  $('preview').tHead.replaceChildren();
  $('preview').tBodies[0].replaceChildren();
  const run = {
    ticket, url, compression, samples: [], frames: 0, bytesReceived: 0, batches: 0, rows: 0,
    allocated: 0, preview: undefined, live: undefined, stats: undefined, elapsed: 0,
    longestHandlerMs: 0,
  };
  demo.run = run;
  demo.state = 'streaming';
  demo.error = undefined;
  setStatus(`Streaming ${ticket} from ${url}`);

  const longTasks = watchLongTasks(run, 'longestTaskMs');
  const sample = sampler(run);
  const ended = next('end', (message) => {
    if (message.type === 'progress') {
      run.frames++;
      run.bytesReceived = message.bytesReceived;
      run.elapsed = message.elapsed;
      run.live = message.live;
      showStats(run);
    } else if (message.type === 'batch') {
      sample(message);
    } else if (message.type === 'preview') {
      run.preview = showPreview(message);
    }
  });
  worker.postMessage({ type: 'start', url, ticket, creditWindow: Number($('segment').value) || undefined });
  const { elapsed, stats, error } = await ended;
  run.elapsed = elapsed;
  run.stats = stats;
  longTasks.disconnect();
  showStats(run);
  if (error) {
    // FlightError code 1 (CANCELLED) after Stop.
    const stopped = error.code === 1 && error.aborted;
    if (stopped) setStatus(`Stopped after ${fmt(run.batches)} batches.`);
    else showError(`The stream failed after ${fmt(run.batches)} batches: ${describe(error)}`);
    demo.state = stopped ? 'stopped' : 'failed';
    demo.error = describe(error);
    setRunning(false);
    return;
  }
  setStatus(`Received ${fmt(run.rows)} rows in ${fmt(run.batches)} batches; comparing decoders and writers…`);
  const panelTasks = watchLongTasks(run, 'longestPanelTaskMs');
  const size = run.stats.ipcBytesReceived;
  const skipDecode = size > COMPARE_BYTES;
  if (skipDecode) {
    $('decode').textContent = `Skipped: the stream (${bytes(size)}) is larger than the ${bytes(COMPARE_BYTES)} this panel holds in memory.`;
  }
  // The panels' measurements cannot be interrupted; Stop would do nothing.
  $('stop').disabled = true;
  const measured = next('panels');
  worker.postMessage({ type: 'panels', url, ticket, skipDecode });
  const panels = await measured;
  panelTasks.disconnect();
  if (panels.error) {
    showError(`The comparison failed: ${describe(panels.error)}`);
    demo.state = 'failed';
    demo.error = describe(panels.error);
  } else {
    if (panels.decode) drawDecoders($('decode'), panels.decode, compression);
    drawWriters($('writer'), panels.writer);
    run.decode = panels.decode;
    run.writer = panels.writer;
    setStatus(`Done: ${fmt(run.rows)} rows, ${bytes(run.bytesReceived)} in ${fmt(run.elapsed, 2)} s.`);
    demo.state = 'done';
  }
  showStats(run);
  setRunning(false);
}

/**
 * Returns what to call for each of the worker's `batch` messages: it adds a point to both
 * charts. Allocation is what the worker's module allocated between batches (the frames'
 * bytes and the decode); throughput is over the last WINDOW batches.
 */
function sampler(run) {
  const history = [{ t: 0, bytes: 0 }];
  return ({ t, numRows, allocated, live, wasm }) => {
    run.allocated += allocated;
    run.batches++;
    run.rows += numRows;
    history.push({ t, bytes: run.bytesReceived });
    const from = history[Math.max(0, history.length - 1 - WINDOW)];
    const dt = Math.max(t - from.t, 1e-6);
    const point = {
      t, mbs: (run.bytesReceived - from.bytes) / 1e6 / dt, bps: Math.min(WINDOW, history.length - 1) / dt,
      allocated, live, wasm, bytesReceived: run.bytesReceived,
    };
    run.samples.push(point);
    throughput.add(t, point.mbs, point.bps);
    allocation.add(t, wasm / MiB, live / MiB, allocated / MiB);
  };
}

/**
 * Records in `run[key]` the longest task the page ran while watched (the Long Tasks API
 * reports tasks of 50 ms or more; 0: none): input waits at most that long. The page's
 * own tasks only handle the worker's messages and draw; in headless Chromium without a
 * GPU a frame's painting alone can pass 50 ms.
 */
function watchLongTasks(run, key) {
  run[key] = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) run[key] = Math.max(run[key], entry.duration);
  });
  observer.observe({ type: 'longtask' });
  return observer;
}

/** An Error's message as a sentence, with what to do when the gateway is out of reach. */
function describe(error) {
  const text = error.message.replace(/\.?$/, '.');
  // FlightError code 14 (UNAVAILABLE): the socket could not open, or was lost.
  return error.code === 14
    ? `${text} Is the gateway running at that address, and does it allow this page's origin? Start tries again.`
    : text;
}

/** Shows the worker's preview of the first rows; returns it. */
function showPreview({ names, rows }) {
  const head = el('tr');
  names.forEach((n) => head.append(el('th', undefined, n)));
  $('preview').tHead.replaceChildren(head);
  $('preview').tBodies[0].replaceChildren(...rows.map((cells) => {
    const tr = el('tr');
    cells.forEach((c) => tr.append(el('td', undefined, c)));
    return tr;
  }));
  return { names, rows };
}

let statsPending = false;
function showStats(run) {
  if (statsPending) return;
  statsPending = true;
  requestAnimationFrame(() => {
    statsPending = false;
    const s = run.stats ?? run.live ?? {};
    // The worker's module, as of its latest batch; unknown before the first.
    const memory = run.samples.at(-1);
    const sampled = (key) => (memory ? bytes(memory[key]) : '—');
    const items = [
      ['bytes received', bytes(run.bytesReceived)],
      ['bytes pushed', bytes(s.bytesPushed ?? 0)],
      ['bytes copied', bytes(s.bytesCopied ?? 0)],
      ['messages', fmt(s.messages ?? 0)],
      ['batches', fmt(run.batches)],
      ['rows', fmt(run.rows)],
      ['frames', `${fmt(run.frames)} (mean ${bytes(run.frames ? run.bytesReceived / run.frames : 0)})`],
      ['throughput', `${fmt(run.elapsed ? run.bytesReceived / 1e6 / run.elapsed : 0, 1)} MB/s`],
      ['allocated', `${bytes(run.allocated)} (${bytes(run.batches ? run.allocated / run.batches : 0)} per batch)`],
      ['live', sampled('live')],
      ['wasm memory', sampled('wasm')],
      ['longest message handling', `${fmt(run.longestHandlerMs, 2)} ms`],
      ['longest task', longest(run.longestTaskMs)],
      ['longest task, panels', longest(run.longestPanelTaskMs)],
    ];
    $('stats').replaceChildren(...items.flatMap(([k, v]) => {
      const dd = el('dd', undefined, v);
      dd.dataset.stat = k;
      return [el('dt', undefined, k), dd];
    }));
  });
}

const longest = (ms) => (ms === undefined ? 'not run' : ms ? `${fmt(ms)} ms` : 'none over 50 ms');

function setRunning(running) {
  $('start').disabled = running;
  $('stop').disabled = !running;
}

function setStatus(text) {
  $('status').textContent = text;
}

function showError(text) {
  $('error').hidden = !text;
  $('error').textContent = text ?? '';
  if (text) setStatus('Ready.');
}
