// Timing helpers shared by every benchmark, in Node and in the browser: medians over
// rounds (the machine is noisy), and plain-text tables.

/**
 * Median of `rounds` timings (ms) of `run`, after warm-up rounds: engines compile wasm
 * and hot JS in tiers, and the first rounds of a cell would otherwise time the compiler.
 */
export async function medianMs(run, rounds, warmups = 3) {
  const [ms] = await interleavedMediansMs([run], { rounds, warmups });
  return ms;
}

/**
 * The median timing (ms) of each of `runs`, from interleaved rounds: each round runs every
 * contender once, in turn, so that a slow spell of the machine falls on all of them
 * rather than on whichever ran then, and the ratios of the medians compare the same
 * stretch of time. A sample is one call, or as many as last MIN_SAMPLE_MS, whose mean it
 * records. Each round starts one contender further on, so that none always runs right
 * after the same one (and meets, say, the collection of what it left). Rounds go on
 * until there are `rounds` of them and, with `minMs`, until that long has passed, so that
 * a cell of microseconds does not rest on a few milliseconds of samples.
 */
export async function interleavedMediansMs(runs, { rounds, minMs = 0, warmups = 3 }) {
  for (const run of runs) for (let i = 0; i < warmups; i++) await run();
  const calls = [];
  for (const run of runs) calls.push(await callsPerSample(run));
  const times = runs.map(() => []);
  const start = performance.now();
  let yielded = start;
  for (let round = 0; round < rounds || performance.now() - start < minMs; round++) {
    for (let turn = 0; turn < runs.length; turn++) {
      const k = (round + turn) % runs.length;
      const t = performance.now();
      for (let i = 0; i < calls[k]; i++) await runs[k]();
      times[k].push((performance.now() - t) / calls[k]);
    }
    if (performance.now() - yielded > YIELD_EVERY_MS) {
      await nextTask();
      yielded = performance.now();
    }
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)]);
}

/**
 * The shortest sample: a run that takes less is called as many times as make it up, and
 * timed as one. Browsers coarsen performance.now() (Chromium to 5 µs even when
 * cross-origin isolated), which rounded a 25 µs call by up to 20%.
 */
const MIN_SAMPLE_MS = 1;

/** How many calls of `run` take at least MIN_SAMPLE_MS: 1, or a power of two. */
async function callsPerSample(run) {
  let calls = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) await run();
    if (performance.now() - t >= MIN_SAMPLE_MS) return calls;
    calls *= 2;
  }
}

/**
 * How often, between rounds, a cell returns to the event loop, as an app does between
 * events. FinalizationRegistry callbacks run only in a task of their own: in a loop that
 * never yields, the wasm memory of every collected table (what toArrowJS results keep) is
 * never freed, and a quick 8192-row cell filled the 4 GiB of wasm memory in seconds.
 */
const YIELD_EVERY_MS = 50;

/** Resolves in a new task (a message, which no engine clamps as it does setTimeout). */
function nextTask() {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/**
 * Runs `run` over and over for `ms` milliseconds. Engines compile wasm and hot JS in tiers,
 * on background threads: on a busy 2-core machine the optimised code of a 1 MB module can
 * take seconds to arrive, which per-cell warm-up rounds do not cover. Each suite warms
 * every contender up this way before it times anything.
 */
export async function warmUp(run, ms = 1500) {
  const start = performance.now();
  let yielded = start;
  while (performance.now() - start < ms) {
    await run();
    if (performance.now() - yielded > YIELD_EVERY_MS) {
      await nextTask();
      yielded = performance.now();
    }
  }
}

/** A fixed-width text table from rows of equal length (first row is the header). */
export function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  const line = (r) => '| ' + r.map((v, c) => String(v).padStart(widths[c])).join(' | ') + ' |';
  const rule = '|' + widths.map((w) => '-'.repeat(w + 1) + ':').join('|') + '|';
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

export const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
