"""Writes the benchmark workload of issues 2 and 3: 200 batches of four columns (int64
sequence; int32 with 10% nulls; float64; 16-byte utf8) at 100, 500, 2000 and 8192 rows
per batch, uncompressed and with LZ4 and ZSTD bodies, as pyarrow writes them. For the
file suite of issue 31, the same uncompressed batches as an IPC file. For the
accessor suite of issue 32, also a nested workload: 200 batches of a list<int32> column
(0 to 4 items, 10% nulls), uncompressed.

    .venv/bin/python bench/data.py OUT_DIR
"""

import os
import random
import sys

import pyarrow as pa

BATCHES = 200
ROWS = [100, 500, 2000, 8192]
CODECS = {"none": None, "lz4": "lz4", "zstd": "zstd"}
SCHEMA = pa.schema(
    [("id", pa.int64()), ("i32", pa.int32()), ("f64", pa.float64()), ("str", pa.string())]
)


def batch(rng, start, rows):
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return pa.record_batch(
        [
            pa.array(range(start, start + rows), pa.int64()),
            pa.array([None if rng.random() < 0.1 else rng.randrange(-(2**31), 2**31) for _ in range(rows)], pa.int32()),
            pa.array([rng.random() * 1000 for _ in range(rows)], pa.float64()),
            pa.array(["".join(rng.choices(alphabet, k=16)) for _ in range(rows)], pa.string()),
        ],
        schema=SCHEMA,
    )


NESTED = pa.schema([("list", pa.list_(pa.int32()))])


def nested_batch(rng, rows):
    def item():
        return None if rng.random() < 0.1 else [rng.randrange(-1000, 1000) for _ in range(rng.randrange(5))]

    items = [item() for _ in range(rows)]
    return pa.record_batch([pa.array(items, pa.list_(pa.int32()))], schema=NESTED)


def write(path, schema, batches, codec=None, new=pa.ipc.new_stream):
    options = pa.ipc.IpcWriteOptions(compression=codec)
    with pa.OSFile(path + ".tmp", "wb") as sink, new(sink, schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    os.replace(path + ".tmp", path)


def main(out):
    os.makedirs(out, exist_ok=True)
    for rows in ROWS:
        paths = {c: os.path.join(out, f"reader-{rows}-{c}.arrows") for c in CODECS}
        # The loaders take every *.arrows: this one is a file, not a stream.
        file = os.path.join(out, f"file-{rows}-none.arrows")
        if not all(os.path.exists(p) for p in [*paths.values(), file]):
            rng = random.Random(rows)
            batches = [batch(rng, i * rows, rows) for i in range(BATCHES)]
            for codec, path in paths.items():
                write(path, SCHEMA, batches, CODECS[codec])
            write(file, SCHEMA, batches, new=pa.ipc.new_file)
        nested = os.path.join(out, f"nested-{rows}.arrows")
        if not os.path.exists(nested):
            rng = random.Random(rows)
            write(nested, NESTED, [nested_batch(rng, rows) for _ in range(BATCHES)])
    print(f"workload in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
