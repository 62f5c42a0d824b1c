// Timing helpers shared by every benchmark, in Node and in the browser: medians over
// rounds (the machine is noisy), and plain-text tables.

/**
 * Median of `rounds` timings (ms) of `run`, after warm-up rounds: engines compile wasm
 * and hot JS in tiers, and the first rounds of a cell would otherwise time the compiler.
 */
export async function medianMs(run, rounds, warmups = 3) {
  for (let i = 0; i < warmups; i++) await run();
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/**
 * Runs `run` over and over for `ms` milliseconds. Engines compile wasm and hot JS in tiers,
 * on background threads: on a busy 2-core machine the optimised code of a 1 MB module can
 * take seconds to arrive, which per-cell warm-up rounds do not cover. Each suite warms
 * every contender up this way before it times anything.
 */
export async function warmUp(run, ms = 1500) {
  const until = performance.now() + ms;
  while (performance.now() < until) await run();
}

/**
 * Times several contenders in interleaved passes: each pass times every run in a block of
 * `rounds` (its median), one after the other, and a run's figure is the median of its
 * passes. A slow phase of this noisy machine then falls on every contender alike, not on
 * one contender's block. Takes [name, run] pairs; returns a Map from name to ms.
 */
export async function interleavedMedianMs(runs, { passes, rounds }) {
  const times = runs.map(() => []);
  for (let p = 0; p < passes; p++) {
    for (const [k, [, run]] of runs.entries()) times[k].push(await medianMs(run, rounds, 1));
  }
  return new Map(runs.map(([name], k) => [name, times[k].sort((a, b) => a - b)[passes >> 1]]));
}

/** A fixed-width text table from rows of equal length (first row is the header). */
export function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  const line = (r) => '| ' + r.map((v, c) => String(v).padStart(widths[c])).join(' | ') + ' |';
  const rule = '|' + widths.map((w) => '-'.repeat(w + 1) + ':').join('|') + '|';
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

export const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
