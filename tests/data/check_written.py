"""Reads the streams Quiver's writer wrote (tests/writer_pyarrow.rs) and checks them
against the data they came from. Prints one line per failure; exits 1 if any.

    .venv/bin/python tests/data/check_written.py OUT_DIR

For each type of generate.py, OUT_DIR holds `<type>.<codec>.arrows` (the batches as
generate.py made them) and `<type>.<codec>.sliced.arrows` (each batch sliced to rows
1..len-1 in Rust before writing), plus `<type>.sizes` (Quiver's messageSize of each batch,
uncompressed), cross-checked with pyarrow's `get_record_batch_size`. `nested.<codec>.arrows` must equal `nested.reference.arrows`, which
arrow-rs's own writer wrote.
"""

import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(__file__))
import generate  # noqa: E402

CODECS = ["none", "lz4", "zstd"]


def read(path):
    with pa.OSFile(path, "rb") as source:
        return pa.ipc.open_stream(source).read_all()


def sliced(batch):
    return batch.slice(1, batch.num_rows - 2) if batch.num_rows >= 2 else batch


def main(out_dir):
    failures = []
    checked = 0
    for name, array in generate.columns().items():
        schema, batches = generate.batches(name, array)
        cases = {"": batches, ".sliced": [sliced(b) for b in batches]}
        for codec in CODECS:
            for suffix, want in cases.items():
                got = read(os.path.join(out_dir, f"{name}.{codec}{suffix}.arrows"))
                expected = pa.Table.from_batches(want, schema=schema)
                if not got.equals(expected) or got.schema.metadata != schema.metadata:
                    failures.append(f"{name}.{codec}{suffix}: pyarrow read {got} expected {expected}")
                checked += 1
        with open(os.path.join(out_dir, f"{name}.sizes")) as f:
            size = int(f.readline())
        # Only where Arrow C++ lays out the same message: the first, unsliced batch (C++
        # keeps more of a sliced array's buffers than Quiver does), and not for the null
        # type (arrow-rs always writes the buffers vector, even empty, and its reader
        # requires it; C++ leaves an empty one out, 8 bytes shorter).
        if name != "null":
            cpp = pa.ipc.get_record_batch_size(batches[0])
            if size != cpp:
                failures.append(f"{name}: Quiver messageSize {size}, pyarrow get_record_batch_size {cpp}")
    for codec in CODECS:
        with pa.OSFile(os.path.join(out_dir, f"with_metadata.{codec}.arrows"), "rb") as source:
            reader = pa.ipc.open_stream(source)
            got = [reader.read_next_batch_with_custom_metadata().custom_metadata for _ in generate.BATCH_METADATA]
        got = [dict(m) if m is not None else None for m in got]
        want = [{k.encode(): v.encode() for k, v in m.items()} if m else None for m in generate.BATCH_METADATA]
        if got != want:
            failures.append(f"with_metadata.{codec}: pyarrow read batch metadata {got}, expected {want}")
        checked += 1
    reference = read(os.path.join(out_dir, "nested.reference.arrows"))
    for codec in CODECS:
        got = read(os.path.join(out_dir, f"nested.{codec}.arrows"))
        if not got.equals(reference):
            failures.append(f"nested.{codec}: pyarrow read {got} expected {reference}")
        checked += 1
    for failure in failures:
        print(failure)
    print(f"checked {checked} streams, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
