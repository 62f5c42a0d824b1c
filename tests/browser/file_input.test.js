// openFile on a 1 GiB File from an <input type=file>, backed by a file on disk
// (file_on_disk.mjs). run.mjs chooses the file with playwright's setInputFiles, so only
// Chromium runs this module. openFile reads the footer, then only the batch asked for.
import { test, assert } from './harness.js';
import { messageSize, openFile } from 'quiver-arrow';

const BATCHES = 128;
const ROWS = 1 << 20;

/** The File the test runner chooses in an <input type=file id=file-on-disk>. */
function chosenFile() {
  const input = Object.assign(document.createElement('input'), { type: 'file', id: 'file-on-disk' });
  const chosen = new Promise((resolve) => {
    input.addEventListener('change', () => resolve(input.files[0]), { once: true });
  });
  document.body.append(input);
  return chosen;
}

test('openFile reads one batch of a 1 GiB File from an <input type=file>, not the File', async () => {
  const file = await chosenFile();
  assert.ok(file.size > 2 ** 30, `${file.size} bytes`);
  const opened = await openFile(file);
  assert.equal(opened.numBatches, BATCHES);
  const footer = opened.bytesRead;
  assert.ok(footer < 64 * 1024, `opening read ${footer} bytes`);

  const k = 77;
  const batch = await opened.batch(k);
  const x = batch.column('x').values;
  assert.equal(x.length, ROWS);
  assert.equal(x[0], k * ROWS);
  assert.equal(x[ROWS - 1], k * ROWS + ROWS - 1);
  const message = messageSize(batch);
  const read = opened.bytesRead;
  assert.ok(read < 2 * message, `read ${read} bytes for a ${message}-byte batch`);
  batch.free();
  opened.free();
  return `${read} of ${file.size} bytes read for batch ${k} (its message: ${message}, the footer: ${footer})`;
});
