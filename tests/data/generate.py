"""Writes the pyarrow interop streams that Quiver's tests read: one stream per type and
body codec, each with a batch with nulls, an empty batch, and a sliced batch.

    .venv/bin/python tests/data/generate.py [OUT_DIR]   (default: tests/data/types)

The same module is imported by the interop checks for the expected tables.
"""

import datetime
import decimal
import json
import os
import random
import sys

import pyarrow as pa

N = 40


def nullable(values, every=5):
    """Every `every`-th value becomes null."""
    return [None if i % every == 3 else v for i, v in enumerate(values)]


def columns():
    """name -> pyarrow Array of N rows."""
    ints = list(range(-N // 2, N - N // 2))
    words = [f"word {i} {'é' * (i % 3)}" for i in range(N)]
    ts = [datetime.datetime(2024, 1, 1, 12, 0, i % 60) for i in range(N)]
    cols = {
        "int8": pa.array(nullable(ints), pa.int8()),
        "int16": pa.array(nullable([i * 300 for i in ints]), pa.int16()),
        "int32": pa.array(nullable([i * 70000 for i in ints]), pa.int32()),
        "int64": pa.array(nullable([i * 2**40 for i in ints]), pa.int64()),
        "uint8": pa.array(nullable(range(N)), pa.uint8()),
        "uint16": pa.array(nullable(range(0, N * 1000, 1000)), pa.uint16()),
        "uint32": pa.array(nullable(range(0, N * 10**8, 10**8)), pa.uint32()),
        "uint64": pa.array(nullable([i * 2**50 for i in range(N)]), pa.uint64()),
        "float32": pa.array(nullable([i * 0.5 for i in ints]), pa.float32()),
        "float64": pa.array(nullable([i * 0.25 for i in ints]), pa.float64()),
        "bool": pa.array(nullable([i % 3 == 0 for i in range(N)]), pa.bool_()),
        "utf8": pa.array(nullable(words), pa.string()),
        "large_utf8": pa.array(nullable(words), pa.large_string()),
        "binary": pa.array(nullable([w.encode() for w in words]), pa.binary()),
        "large_binary": pa.array(nullable([w.encode() for w in words]), pa.large_binary()),
        "utf8_view": pa.array(nullable([w * (1 + i % 4) for i, w in enumerate(words)]), pa.string_view()),
        "fixed_size_binary": pa.array(nullable([bytes([i] * 4) for i in range(N)]), pa.binary(4)),
        "decimal128": pa.array(nullable([decimal.Decimal(i) / 100 for i in ints]), pa.decimal128(12, 2)),
        "decimal256": pa.array(nullable([decimal.Decimal(i) * 10**30 for i in ints]), pa.decimal256(50, 0)),
        "date32": pa.array(nullable([datetime.date(2020, 1, 1 + i % 28) for i in range(N)]), pa.date32()),
        "date64": pa.array(nullable([datetime.date(2020, 2, 1 + i % 28) for i in range(N)]), pa.date64()),
        "time32_ms": pa.array(nullable([i * 1000 for i in range(N)]), pa.time32("ms")),
        "time64_us": pa.array(nullable([i * 10**6 for i in range(N)]), pa.time64("us")),
        "timestamp_tz": pa.array(nullable(ts), pa.timestamp("ms", tz="Europe/Paris")),
        "timestamp_ns": pa.array(nullable(ts), pa.timestamp("ns")),
        "duration": pa.array(nullable([i * 1000 for i in ints]), pa.duration("ms")),
        "interval": pa.array(
            nullable([pa.MonthDayNano([i, -i, i * 1000]) for i in range(N)]),
            pa.month_day_nano_interval(),
        ),
        "list": pa.array(nullable([list(range(i % 4)) for i in range(N)]), pa.list_(pa.int32())),
        "large_list": pa.array(nullable([[w] * (i % 3) for i, w in enumerate(words)]), pa.large_list(pa.string())),
        "fixed_size_list": pa.array(nullable([[i, i + 1, i + 2] for i in range(N)]), pa.list_(pa.float64(), 3)),
        # Offsets out of order and overlapping, as only list views allow, with empty lists.
        "list_view": pa.ListViewArray.from_arrays(
            pa.array([(5 * i) % 9 for i in range(N)], pa.int32()),
            pa.array([i % 4 for i in range(N)], pa.int32()),
            pa.array(range(100, 112), pa.int32()),
            mask=pa.array([i % 5 == 3 for i in range(N)]),
        ),
        "large_list_view": pa.LargeListViewArray.from_arrays(
            pa.array([(3 * i) % 8 for i in range(N)], pa.int64()),
            pa.array([i % 3 for i in range(N)], pa.int64()),
            pa.array(nullable(words[:10], every=4)),
            mask=pa.array([i % 5 == 3 for i in range(N)]),
        ),
        "struct": pa.array(
            nullable([{"a": i, "b": words[i]} for i in range(N)]),
            pa.struct([("a", pa.int32()), ("b", pa.string())]),
        ),
        "map": pa.array(
            nullable([[(words[i], i), ("k", -i)] if i % 2 else [] for i in range(N)]),
            pa.map_(pa.string(), pa.int64()),
        ),
        "dictionary": pa.array(nullable([["red", "green", "blue"][i % 3] for i in range(N)])).dictionary_encode(),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array([3, 10, 25, N], pa.int32()), pa.array(["a", None, "c", "d"])
        ),
        "null": pa.nulls(N),
    }
    return cols


def batches(name, array):
    """A batch with nulls, an empty batch, and a sliced batch (offset 7, length 20)."""
    schema = pa.schema([pa.field(name, array.type)], metadata={"source": "generate.py"})
    table_batch = pa.record_batch([array], schema=schema)
    return schema, [table_batch, table_batch.slice(0, 0), table_batch.slice(7, 20)]


CODECS = {"none": None, "lz4": "lz4", "zstd": "zstd"}


def write_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for name, array in columns().items():
        schema, parts = batches(name, array)
        for codec_name, codec in CODECS.items():
            options = pa.ipc.IpcWriteOptions(compression=codec)
            path = os.path.join(out_dir, f"{name}.{codec_name}.arrows")
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema, options=options) as writer:
                for batch in parts:
                    writer.write_batch(batch)
            written += 1
    return written


DICTIONARY_BATCHES = [["a", "b", "a"], ["a", "b", "c", None], ["x", "y", "x"]]


def write_dictionary_evolution(out_dir):
    """A dictionary that grows by a delta, then is replaced; the expected values go to
    dictionary_evolution.json."""
    schema = pa.schema([("d", pa.dictionary(pa.int32(), pa.string()))])
    for codec_name, codec in CODECS.items():
        options = pa.ipc.IpcWriteOptions(compression=codec, emit_dictionary_deltas=True)
        path = os.path.join(out_dir, f"dictionary_evolution.{codec_name}.arrows")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema, options=options) as writer:
            for values in DICTIONARY_BATCHES:
                dictionary = sorted({v for v in values if v is not None}, key=values.index)
                if values is DICTIONARY_BATCHES[1]:
                    dictionary = ["a", "b", "c"]  # extends the first: written as a delta
                indices = [None if v is None else dictionary.index(v) for v in values]
                array = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary))
                writer.write_batch(pa.record_batch([array], schema=schema))
    with open(os.path.join(out_dir, "dictionary_evolution.json"), "w") as f:
        json.dump(DICTIONARY_BATCHES, f)


def write_multi_block(out_dir):
    """Bodies whose buffers span many LZ4 blocks (64 KiB each, linked: a block refers back
    into the one before) and several ZSTD blocks, with an incompressible column that the
    LZ4 encoder stores as it is."""
    rows = 150_000
    rng = random.Random(7)
    noise = [rng.randbytes(12) for _ in range(rows)]
    table = pa.table({
        "i": pa.array([(i * 7919) % 1000 for i in range(rows)], pa.int64()),
        "s": pa.array([f"row {i % 3000} of {rows}" for i in range(rows)]),
        "noise": pa.array(noise, pa.binary(12)),
    })
    for codec_name, codec in CODECS.items():
        options = pa.ipc.IpcWriteOptions(compression=codec)
        path = os.path.join(out_dir, f"multi_block.{codec_name}.arrows")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema, options=options) as writer:
            writer.write_table(table, max_chunksize=60_000)


BATCH_METADATA = [{"page": "0", "source": "generate.py"}, None, {"page": "2", "note": "ünïcode ✓"}]


def write_batch_metadata(out_dir):
    """Three batches, the first and last with message-level custom metadata; the expected
    metadata (None as {}) goes to batch_metadata.json."""
    schema = pa.schema([("x", pa.int32())])
    batch = pa.record_batch([pa.array([1, None, 3], pa.int32())], schema=schema)
    for codec_name, codec in CODECS.items():
        options = pa.ipc.IpcWriteOptions(compression=codec)
        path = os.path.join(out_dir, f"batch_metadata.{codec_name}.arrows")
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema, options=options) as writer:
            for metadata in BATCH_METADATA:
                writer.write_batch(batch, custom_metadata=metadata)
    with open(os.path.join(out_dir, "batch_metadata.json"), "w") as f:
        json.dump([m or {} for m in BATCH_METADATA], f)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "types")
    count = write_all(out)
    write_dictionary_evolution(out)
    write_multi_block(out)
    write_batch_metadata(out)
    print(f"wrote {count} streams, the dictionary evolution, multi-block and batch metadata streams to {out}")
