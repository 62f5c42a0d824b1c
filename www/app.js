// The demo page: runs a DoGet through the gateway, decodes each frame as it arrives,
// graphs throughput and wasm allocation live, then runs the comparison panels.
import init, { StreamReader, memoryStats } from '../pkg/web/index.js';
import { FlightStatusError, doGet, gatewayUrl } from './wire.js';
import { allocationChart, bytes, el, fmt, throughputChart } from './charts.js';
import { WRITER_ROWS, compareDecoders, compareWriters } from './compare.js';

const $ = (id) => document.getElementById(id);
const MiB = 1024 * 1024;
/** Frames kept for the decode comparison; a longer stream skips it rather than hoard memory. */
const KEEP_BYTES = 256 * MiB;
/** Throughput is measured over the last this many batches. */
const WINDOW = 10;
const PREVIEW_ROWS = 8;

await init();
const throughput = throughputChart($('throughput'));
const allocation = allocationChart($('allocation'));
let controller;
// The state of the latest run, for the end-to-end test and the curious (console).
const demo = { state: 'idle', run: undefined };
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
  controller = new AbortController();
  const run = {
    ticket, url, compression, samples: [], frames: 0, bytesReceived: 0, batches: 0, rows: 0,
    allocated: 0, preview: undefined, stats: undefined, elapsed: 0,
  };
  demo.run = run;
  demo.state = 'streaming';
  setStatus(`Streaming ${ticket} from ${url}`);

  const reader = new StreamReader();
  const kept = [];
  let keptBytes = 0;
  const start = performance.now();
  const history = [{ t: 0, bytes: 0 }];
  let lastAllocated = memoryStats().allocatedBytes;

  const onBatch = (batch) => {
    const t = (performance.now() - start) / 1000;
    const memory = memoryStats();
    const allocated = memory.allocatedBytes - lastAllocated;
    lastAllocated = memory.allocatedBytes;
    run.allocated += allocated;
    run.batches++;
    run.rows += batch.numRows;
    if (!run.preview) run.preview = preview(batch);
    history.push({ t, bytes: run.bytesReceived });
    const from = history[Math.max(0, history.length - 1 - WINDOW)];
    const dt = Math.max(t - from.t, 1e-6);
    const sample = {
      t, mbs: (run.bytesReceived - from.bytes) / 1e6 / dt, bps: (history.length - 1 - history.indexOf(from)) / dt,
      allocated, live: memory.liveBytes, wasm: memory.wasmMemoryBytes, bytesReceived: run.bytesReceived,
    };
    run.samples.push(sample);
    throughput.add(t, sample.mbs, sample.bps);
    allocation.add(t, allocated / MiB, memory.liveBytes / MiB, memory.wasmMemoryBytes / MiB);
  };

  let failed;
  try {
    await doGet(url, ticket, {
      credit: Number($('segment').value),
      signal: controller.signal,
      onHello: (hello) => { run.hello = hello; },
      onFrame(ipc, payload) {
        run.frames++;
        run.bytesReceived += payload;
        if (keptBytes + ipc.byteLength <= KEEP_BYTES) kept.push(ipc);
        keptBytes += ipc.byteLength;
        reader.push(ipc);
        for (const batch of reader) {
          onBatch(batch);
          batch.free();
        }
        run.stats = reader.stats;
        run.elapsed = (performance.now() - start) / 1000;
        showStats(run);
      },
    });
    reader.finish();
  } catch (error) {
    failed = error;
  } finally {
    run.stats = reader.stats;
    run.elapsed = (performance.now() - start) / 1000;
    reader.free();
    showStats(run);
  }
  if (failed) {
    const stopped = failed instanceof FlightStatusError && failed.code === 1 && controller.signal.aborted;
    if (stopped) setStatus(`Stopped after ${fmt(run.batches)} batches.`);
    else showError(`The stream failed after ${fmt(run.batches)} batches: ${failed.message}`);
    demo.state = stopped ? 'stopped' : 'failed';
    demo.error = failed.message;
    setRunning(false);
    return;
  }
  setStatus(`Received ${fmt(run.rows)} rows in ${fmt(run.batches)} batches; comparing decoders and writers…`);
  try {
    run.decode = keptBytes <= KEEP_BYTES
      ? await compareDecoders($('decode'), kept, compression)
      : ($('decode').textContent = `Skipped: the stream (${bytes(keptBytes)}) is larger than the ${bytes(KEEP_BYTES)} the page keeps.`, undefined);
    kept.length = 0;
    run.writer = await writerPanel(url);
    setStatus(`Done: ${fmt(run.rows)} rows, ${bytes(run.bytesReceived)} in ${fmt(run.elapsed, 2)} s.`);
    demo.state = 'done';
  } catch (error) {
    showError(`The comparison failed: ${error.message}`);
    demo.state = 'failed';
    demo.error = error.message;
  } finally {
    setRunning(false);
  }
}

/** Reads one batch of each size of the writer panel from the same generated data. */
async function writerPanel(url) {
  const batches = new Map();
  try {
    for (const rows of WRITER_ROWS) {
      const reader = new StreamReader();
      await doGet(url, `rows=${rows}&batches=1`, { onFrame: (ipc) => reader.push(ipc) });
      batches.set(rows, reader.nextBatch());
      reader.free();
    }
    return compareWriters($('writer'), batches);
  } finally {
    for (const batch of batches.values()) batch?.free();
  }
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
    const s = run.stats ?? {};
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
    ];
    $('stats').replaceChildren(...items.flatMap(([k, v]) => {
      const dd = el('dd', undefined, v);
      dd.dataset.stat = k;
      return [el('dt', undefined, k), dd];
    }));
  });
}

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
