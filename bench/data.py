"""Writes the benchmark workload of issues 2 and 3: 200 batches of four columns (int64
sequence; int32 with 10% nulls; float64; 16-byte utf8) at 100, 500, 2000 and 8192 rows
per batch, uncompressed and with LZ4 and ZSTD bodies, as pyarrow writes them.

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


def main(out):
    os.makedirs(out, exist_ok=True)
    for rows in ROWS:
        paths = {c: os.path.join(out, f"reader-{rows}-{c}.arrows") for c in CODECS}
        if all(os.path.exists(p) for p in paths.values()):
            continue
        rng = random.Random(rows)
        batches = [batch(rng, i * rows, rows) for i in range(BATCHES)]
        for codec, path in paths.items():
            options = pa.ipc.IpcWriteOptions(compression=CODECS[codec])
            with pa.OSFile(path + ".tmp", "wb") as sink, pa.ipc.new_stream(sink, SCHEMA, options=options) as w:
                for b in batches:
                    w.write_batch(b)
            os.replace(path + ".tmp", path)
    print(f"workload in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
