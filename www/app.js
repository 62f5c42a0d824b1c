// The demo page: a DoGet through the gateway with Quiver's FlightClient, which decodes
// each frame as it arrives; graphs throughput and wasm allocation per batch live, then
// runs the comparison panels.
import init, { FlightClient, memoryStats } from '../pkg/web/index.js';
import { captureFrames, gatewayUrl } from './wire.js';
import { allocationChart, bytes, el, fmt, throughputChart } from './charts.js';
import { WRITER_ROWS, compareDecoders, compareWriters } from './compare.js';

const $ = (id) => document.getElementById(id);
const MiB = 1024 * 1024;
/** The decode panel holds a stream's frames in memory; a longer stream skips it. */
const COMPARE_BYTES = 256 * MiB;
/** Throughput is measured over the last this many batches. */
const WINDOW = 10;
const PREVIEW_ROWS = 8;

await init();
const throughput = throughputChart($('throughput'));
const allocation = allocationChart($('allocation'));
let controller;
// The state of the latest run, for the end-to-end test and the curious (console).
const demo = { state: 'idle', run: undefined, charts: { throughput, allocation } };
window.quiverDemo = demo;

$('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  start();
});
$('stop').addEventListener('click', () => controller?.abort());

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
  controller = new AbortController();
  const run = {
    ticket, url, compression, samples: [], frames: 0, bytesReceived: 0, batches: 0, rows: 0,
    allocated: 0, preview: undefined, live: undefined, stats: undefined, elapsed: 0,
  };
  demo.run = run;
  demo.state = 'streaming';
  demo.error = undefined;
  setStatus(`Streaming ${ticket} from ${url}`);

  let client;
  let stream;
  let failed;
  const began = performance.now();
  const longTasks = watchLongTasks(run, 'longestTaskMs');
  try {
    client = await FlightClient.connect(url);
    const sample = sampler(run, began);
    stream = client.doGet(ticket, {
      signal: controller.signal,
      creditWindow: Number($('segment').value) || undefined,
      // After each frame, so the counters move while a large batch is still arriving.
      onProgress: (progress) => {
        run.frames++;
        run.bytesReceived = progress.bytesReceived;
        run.elapsed = (performance.now() - began) / 1000;
        run.live = stream.stats;
        showStats(run);
      },
    });
    // Each batch is decoded in the frame's own socket task, so input is handled between.
    for await (const batch of stream) {
      sample(batch);
      run.preview ??= preview(batch);
      batch.free();
    }
  } catch (error) {
    failed = error;
  } finally {
    run.elapsed = (performance.now() - began) / 1000;
    longTasks.disconnect();
    if (stream) run.stats = stream.stats;
    stream?.free();
    client?.close();
    client?.free();
    showStats(run);
  }
  if (failed) {
    const stopped = failed.code === 1 && controller.signal.aborted;
    if (stopped) setStatus(`Stopped after ${fmt(run.batches)} batches.`);
    else showError(`The stream failed after ${fmt(run.batches)} batches: ${describe(failed)}`);
    demo.state = stopped ? 'stopped' : 'failed';
    demo.error = describe(failed);
    setRunning(false);
    return;
  }
  setStatus(`Received ${fmt(run.rows)} rows in ${fmt(run.batches)} batches; comparing decoders and writers…`);
  const panelTasks = watchLongTasks(run, 'longestPanelTaskMs');
  try {
    run.decode = await decodePanel(url, ticket, compression, run.stats.ipcBytesReceived);
    run.writer = await writerPanel(url);
    setStatus(`Done: ${fmt(run.rows)} rows, ${bytes(run.bytesReceived)} in ${fmt(run.elapsed, 2)} s.`);
    demo.state = 'done';
  } catch (error) {
    showError(`The comparison failed: ${describe(error)}`);
    demo.state = 'failed';
    demo.error = describe(error);
  } finally {
    panelTasks.disconnect();
    showStats(run);
    setRunning(false);
  }
}

/**
 * Returns what to call for each batch: it adds a point to both charts. Allocation is
 * `memoryStats()` between batches (the frames' bytes and the decode); throughput is over
 * the last WINDOW batches.
 */
function sampler(run, began) {
  const history = [{ t: 0, bytes: 0 }];
  let lastAllocated = memoryStats().allocatedBytes;
  return (batch) => {
    const t = (performance.now() - began) / 1000;
    const memory = memoryStats();
    const allocated = memory.allocatedBytes - lastAllocated;
    lastAllocated = memory.allocatedBytes;
    run.allocated += allocated;
    run.batches++;
    run.rows += batch.numRows;
    history.push({ t, bytes: run.bytesReceived });
    const from = history[Math.max(0, history.length - 1 - WINDOW)];
    const dt = Math.max(t - from.t, 1e-6);
    const point = {
      t, mbs: (run.bytesReceived - from.bytes) / 1e6 / dt, bps: Math.min(WINDOW, history.length - 1) / dt,
      allocated, live: memory.liveBytes, wasm: memory.wasmMemoryBytes, bytesReceived: run.bytesReceived,
    };
    run.samples.push(point);
    throughput.add(t, point.mbs, point.bps);
    allocation.add(t, memory.wasmMemoryBytes / MiB, memory.liveBytes / MiB, allocated / MiB);
  };
}

/** Reads the same ticket again, frames as they came, and decodes them twice. */
async function decodePanel(url, ticket, compression, size) {
  if (size > COMPARE_BYTES) {
    $('decode').textContent = `Skipped: the stream (${bytes(size)}) is larger than the ${bytes(COMPARE_BYTES)} this panel holds in memory.`;
    return undefined;
  }
  return compareDecoders($('decode'), await captureFrames(url, ticket), compression);
}

/** Reads one batch of each size of the writer panel from the same generated data. */
async function writerPanel(url) {
  const batches = new Map();
  const client = await FlightClient.connect(url);
  try {
    for (const rows of WRITER_ROWS) {
      const table = await client.doGet(`rows=${rows}&batches=1`).readAll();
      batches.set(rows, table.batches[0]);
      table.free();
    }
    return await compareWriters($('writer'), batches);
  } finally {
    for (const batch of batches.values()) batch.free();
    client.close();
    client.free();
  }
}

/**
 * Records in `run[key]` the longest task the page ran while watched (the Long Tasks API
 * reports tasks of 50 ms or more; 0: none): input waits at most that long. While
 * streaming each frame is one task; the panels run in slices (compare.js).
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

function preview(batch) {
  const names = batch.schema.fields.map((f) => f.name);
  const columns = names.map((name) => batch.column(name));
  const rows = [];
  for (let i = 0; i < Math.min(PREVIEW_ROWS, batch.numRows); i++) {
    rows.push(columns.map((c) => String(c.get(i))));
  }
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
    const memory = memoryStats();
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
      ['live', bytes(memory.liveBytes)],
      ['wasm memory', bytes(memory.wasmMemoryBytes)],
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
