// Live uPlot charts (global `uPlot`, vendored) and plain HTML bar charts.

const MiB = 1024 * 1024;

/** A line chart over time whose data grows by `add(t, ...ys)`; redrawn once per frame. */
export class LiveChart {
  constructor(element, series, axes) {
    this.data = [[], ...series.map(() => [])];
    this.pending = false;
    this.plot = new uPlot({
      width: Math.max(320, element.clientWidth || 480),
      height: 220,
      scales: { x: { time: false } },
      series: [{ label: 's', value: (_, v) => (v == null ? '' : `${v.toFixed(2)} s`) }, ...series],
      axes: [{ label: 'seconds' }, ...axes],
      legend: { live: false },
    }, this.data, element);
    new ResizeObserver(() => this.plot.setSize({ width: element.clientWidth, height: 220 }))
      .observe(element);
  }

  /** Points so far, per series. */
  get points() {
    return this.data[0].length;
  }

  reset() {
    this.data.forEach((column) => { column.length = 0; });
    this.plot.setData(this.data);
  }

  add(t, ...ys) {
    this.data[0].push(t);
    ys.forEach((y, i) => this.data[i + 1].push(y));
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.plot.setData(this.data);
    });
  }
}

export const throughputChart = (element) => new LiveChart(element, [
  { label: 'MB/s', stroke: '#2563eb', width: 2, scale: 'mbs', value: (_, v) => fmt(v, 1) },
  { label: 'batches/s', stroke: '#d97706', width: 2, scale: 'bps', value: (_, v) => fmt(v, 0) },
], [
  { scale: 'mbs', label: 'MB/s', stroke: '#2563eb' },
  { scale: 'bps', label: 'batches/s', side: 1, stroke: '#d97706', grid: { show: false } },
]);

export const allocationChart = (element) => new LiveChart(element, [
  { label: 'wasm memory (MiB)', stroke: '#6b7280', width: 2, dash: [6, 4], scale: 'mib', value: (_, v) => fmt(v, 1) },
  { label: 'live (MiB)', stroke: '#059669', width: 3, scale: 'mib', value: (_, v) => fmt(v, 2) },
  // Drawn last, on top: with one batch alive at a time it runs close to the live bytes.
  { label: 'allocated per batch (MiB)', stroke: '#7c3aed', width: 2, dash: [4, 3], scale: 'mib', value: (_, v) => fmt(v, 2) },
], [
  { scale: 'mib', label: 'MiB' },
]);

/**
 * Horizontal bars in groups: `groups` is `[{ label, bars: [{ name, value, text, kind }] }]`,
 * each bar scaled to the largest value of all groups.
 */
export function drawBars(element, groups, note) {
  const max = Math.max(...groups.flatMap((g) => g.bars.map((b) => b.value ?? 0)), 1);
  element.replaceChildren();
  for (const group of groups) {
    const block = el('div', 'group');
    block.append(el('div', 'group-label', group.label));
    for (const bar of group.bars) {
      const row = el('div', `bar-row ${bar.kind ?? ''}`);
      const track = el('div', 'track');
      const fill = el('div', 'fill');
      fill.style.width = `${bar.value == null ? 0 : Math.max(0.5, (100 * bar.value) / max)}%`;
      track.append(fill);
      row.append(el('span', 'name', bar.name), track, el('span', 'value', bar.text));
      block.append(row);
    }
    element.append(block);
  }
  if (note) element.append(el('p', 'note', note));
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function fmt(value, digits = 0) {
  return value == null || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function bytes(n) {
  if (n >= MiB) return `${fmt(n / MiB, 2)} MiB`;
  if (n >= 1024) return `${fmt(n / 1024, 1)} KiB`;
  return `${fmt(n)} B`;
}
