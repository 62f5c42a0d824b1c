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

/** A fixed-width text table from rows of equal length (first row is the header). */
export function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  const line = (r) => '| ' + r.map((v, c) => String(v).padStart(widths[c])).join(' | ') + ' |';
  const rule = '|' + widths.map((w) => '-'.repeat(w + 1) + ':').join('|') + '|';
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

export const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
