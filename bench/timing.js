// Timing helpers shared by every benchmark, in Node and in the browser: medians over
// rounds (the machine is noisy), and plain-text tables.

/**
 * Median of `rounds` samples (ms a call) of `run`, after warm-up rounds: engines compile
 * wasm and hot JS in tiers, and the first rounds of a cell would otherwise time the
 * compiler.
 */
export async function medianMs(run, rounds, warmups = 3) {
  const [ms] = await interleavedMediansMs([run], { rounds, warmups });
  return ms;
}

/**
 * The median time (ms a call) of each of `runs`, from interleaved rounds: each round runs
 * every contender once, so that a slow spell of the machine falls on all of them rather
 * than on whichever ran then, and the ratios of the medians compare the same stretch of
 * time. Rounds go on until there are `rounds` of them and, with `minMs`, until that long
 * has passed, so that a cell of microseconds does not rest on a few milliseconds of
 * samples.
 *
 * - Each round runs the contenders in an order of its own (a seeded shuffle), so that
 *   none mostly runs right after the same one and meets, say, the collection of what
 *   that one left.
 * - A sample lasts about as long for every contender of a cell: the slowest one's call,
 *   within MIN_SAMPLE_MS and MAX_SAMPLE_MS; a faster contender makes it up of several
 *   calls, and records their mean. So each sample spans many ticks of a coarse clock,
 *   and every contender's samples take their share of the collections that allocation
 *   brings, rather than a single call of a slow one often slipping between them.
 */
export async function interleavedMediansMs(runs, { rounds, minMs = 0, warmups = 3 }) {
  for (const run of runs) for (let i = 0; i < warmups; i++) await run();
  const perCall = [];
  for (const run of runs) perCall.push(await msPerCall(run));
  const sampleMs = Math.min(MAX_SAMPLE_MS, Math.max(MIN_SAMPLE_MS, ...perCall));
  const calls = perCall.map((ms) => Math.max(1, Math.round(sampleMs / ms)));
  const order = runs.map((_, k) => k);
  const random = seededRandom(runs.length);
  const times = runs.map(() => []);
  const start = performance.now();
  let yielded = start;
  for (let round = 0; round < rounds || performance.now() - start < minMs; round++) {
    shuffle(order, random);
    for (const k of order) {
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
 * The bounds of a sample. Browsers coarsen performance.now() (Chromium to 5 µs even when
 * cross-origin isolated), which rounded a 25 µs call by up to 20%; a contender slower
 * than the upper bound is timed one call a sample, so that a cell with a slow one
 * does not take many times as long.
 */
const MIN_SAMPLE_MS = 1;
const MAX_SAMPLE_MS = 20;

/** The time of one call of `run`, from as many calls as take MIN_SAMPLE_MS. */
async function msPerCall(run) {
  for (let calls = 1; ; calls *= 2) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) await run();
    const ms = performance.now() - t;
    if (ms >= MIN_SAMPLE_MS) return ms / calls;
  }
}

/** A small deterministic generator (mulberry32), so that a rerun shuffles alike. */
function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Fisher–Yates, in place. */
function shuffle(array, random) {
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [array[i], array[j]] = [array[j], array[i]];
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
