// A 1 GiB IPC file on disk for file_input.test.js, which reads it through an
// <input type=file>: a File backed by a file on disk, not by blob storage, as a user's
// file is. Headless Chromium cannot build a 1 GiB File in the page (its blob storage
// limit), and a File from an input is the case openFile exists for.
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Batches of the file, each 2^20 doubles (8 MiB); batch k holds k * 2^20 + i at row i. */
export const FILE_ON_DISK = { batches: 128, rows: 1 << 20 };

/** Writes the file with the Node build; `remove()` deletes it. */
export async function writeFileOnDisk() {
  const { FileWriter, batchFromColumns } = await import('quiver-arrow');
  const dir = await mkdtemp(join(tmpdir(), 'quiver-file-on-disk-'));
  const path = join(dir, 'one-gib.arrow');
  const fd = openSync(path, 'w');
  const { batches, rows } = FILE_ON_DISK;
  const x = new Float64Array(rows);
  let writer;
  try {
    for (let k = 0; k < batches; k++) {
      for (let i = 0; i < rows; i++) x[i] = k * rows + i;
      const batch = batchFromColumns({ x });
      writer ??= FileWriter.forBatch(batch);
      append(fd, writer.write(batch));
      batch.free();
    }
    append(fd, writer.finish());
  } finally {
    writer?.free();
    closeSync(fd);
  }
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes the chunks, views of wasm memory, before the next call into wasm moves them. */
function append(fd, chunks) {
  for (const chunk of chunks.toArray()) writeSync(fd, chunk);
  chunks.free();
}
