// Draws the comparison panels from the figures the demo's worker measured (panels.js).
import { bytes, drawBars, fmt } from './charts.js';

/** The decode panel: Quiver against apache-arrow JS on the same frames. */
export function drawDecoders(element, results, compression) {
  const { frames, bytes: total } = results;
  const bar = (name, kind) => {
    const r = results[name];
    if (r.error) return { name, value: null, text: `failed: ${r.error}`, kind: 'failed' };
    return { name, value: total / 1e6 / (r.ms / 1000), text: `${fmt(total / 1e6 / (r.ms / 1000), 0)} MB/s (${fmt(r.ms, 1)} ms)`, kind };
  };
  const q = results.Quiver;
  const a = results['apache-arrow JS'];
  const agree = !q.error && !a.error && q.rows === a.rows && q.sum === a.sum;
  drawBars(element, [{
    label: `${frames} frames, ${bytes(total)} of IPC (${compression}); decode and sum the value column`,
    bars: [bar('Quiver', 'quiver'), bar('apache-arrow JS', 'arrow')],
  }], [
    !q.error && `Quiver allocated ${bytes(q.allocated)} in wasm for ${fmt(q.rows)} rows.`,
    a.error && compression !== 'none' && 'apache-arrow JS reads compressed bodies only with a codec registered by hand; Quiver decodes LZ4 and ZSTD in the module.',
    agree && `Both read ${fmt(q.rows)} rows with the same sum.`,
  ].filter(Boolean).join(' '));
}

/** The writer panel: allocated bytes per message, right-sized against fixed 1 MiB chunks. */
export function drawWriters(element, rows) {
  drawBars(element, rows.map(({ n, payload, exact, fixed }) => ({
    label: `${fmt(n)} rows: message ${bytes(payload)}`,
    bars: [
      { name: 'right-sized', value: exact, text: bytes(exact), kind: 'quiver' },
      { name: 'fixed 1 MiB', value: fixed, text: bytes(fixed), kind: 'fixed' },
    ],
  })), 'Right-sized chunks allocate the message size once; fixed chunks allocate a zeroed 1 MiB chunk per message and then copy it down (Apache DataFusion Comet #6985).');
}
