// Prints a browser test module's results, one line per test, as both runners (run.mjs,
// run_engine.mjs) do; returns how many passed and failed.
export function printResults(label, results) {
  let passed = 0;
  let failed = 0;
  for (const r of results) {
    const name = `${label} > ${r.name}`;
    if (r.ok) {
      passed++;
      console.log(`ok - ${name} (${r.ms.toFixed(0)} ms)${r.note ? ` [${r.note}]` : ''}`);
    } else {
      failed++;
      console.log(`not ok - ${name}\n  ${r.error.message}\n${indent(r.error.stack)}`);
    }
  }
  return { passed, failed };
}

export function indent(text) {
  return text.split('\n').filter(Boolean).map((l) => `    ${l}`).join('\n');
}
