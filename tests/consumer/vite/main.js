// A Vite app as a user would write it: the package by name, init() with no argument (the
// bundler must ship quiver_bg.wasm and rewrite its URL), then a stream decoded as it
// arrives. The result goes into #result for tests/consumer/browser.mjs to check and, given
// ?report= (bench/launch.mjs, for Firefox and WebKit), is POSTed there too.
import init, { StreamReader, tableFromIPC } from 'quiver-arrow';

const out = document.getElementById('result');

async function main() {
  // A second init() is harmless: it returns the instance the first one loaded.
  const instance = await init();
  if ((await init()) !== instance) throw new Error('a second init() loaded another instance');
  const bytes = new Uint8Array(await (await fetch('./data.arrows')).arrayBuffer());
  const reader = new StreamReader();
  let rows = 0;
  let sum = 0;
  // Uneven segments, as a network delivers them.
  for (let at = 0; at < bytes.length; at += 1000) {
    reader.push(bytes.subarray(at, at + 1000));
    for (const batch of reader) {
      rows += batch.numRows;
      for (const x of batch.column('x')) sum += x;
      batch.free();
    }
  }
  reader.finish();
  const names = reader.schema.fields.map((f) => f.name);
  reader.free();
  const table = tableFromIPC(bytes);
  const strings = table.getChild('s').toArray().slice(0, 3);
  table.free();
  return { rows, sum, names, strings };
}

const report = new URLSearchParams(location.search).get('report');
main().then(
  (result) => result,
  (error) => ({ error: String(error?.stack ?? error) }),
).then((result) => {
  out.textContent = JSON.stringify(result);
  if (report) fetch(`${report}result`, { method: 'POST', body: JSON.stringify({ result }) });
});
