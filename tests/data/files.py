"""IPC files for Quiver's file tests: written by pyarrow (ipc.new_file, feather v2 with
each codec), pandas (to_feather), polars (write_ipc) and DuckDB (its Arrow export, in its
default output and in Arrow 1.5 output with list views, string views and UUIDs, written
by pyarrow's file writer), and the check that pyarrow and DuckDB read back the files
Quiver wrote.

    .venv/bin/python tests/data/files.py write OUT_DIR
    .venv/bin/python tests/data/files.py check OUT_DIR

`write` writes `<name>.arrow` for each producer and, beside it, `<name>.expected.arrows`:
what pyarrow reads from the file, as an uncompressed stream, which Quiver's decode of the
file must equal. `check` opens every `<name>.quiver.<codec>.arrow` with pyarrow's file
reader, reads each batch by index, and compares them with `<name>.expected.arrows`.
Prints one line per failure; exits 1 if any.
"""

import datetime
import glob
import os
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather

sys.path.insert(0, os.path.dirname(__file__))
import generate  # noqa: E402


def all_types():
    """Every type of generate.py in one table of three batches: with nulls, empty, sliced."""
    columns = generate.columns()
    batch = pa.record_batch(list(columns.values()), names=list(columns.keys()))
    return pa.Table.from_batches([batch, batch.slice(0, 0), batch.slice(7, 20)])


def dictionary_deltas(path):
    """A dictionary that a delta extends between the first and the second batch."""
    schema = pa.schema([("d", pa.dictionary(pa.int32(), pa.string())), ("n", pa.int64())])
    options = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    steps = [(["a", "b"], [0, 1, 0]), (["a", "b", "c"], [0, 1, 2, None]), (["a", "b", "c"], [2, 0, 1])]
    with pa.ipc.new_file(path, schema, options=options) as writer:
        for dictionary, indices in steps:
            array = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary))
            writer.write_batch(pa.record_batch([array, pa.array(range(len(indices)))], schema=schema))


def frame():
    rows = 50
    return {
        "int": list(range(rows)),
        "float": [i / 4 if i % 7 else None for i in range(rows)],
        "text": [f"row {i}" if i % 5 else None for i in range(rows)],
        "flag": [i % 3 == 0 for i in range(rows)],
        "when": [datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=i) for i in range(rows)],
    }


DUCKDB_QUERY = """
SELECT i AS int, i::TINYINT AS tiny, i::UBIGINT AS ubig, i::HUGEINT AS huge,
  (i / 3)::DECIMAL(18, 3) AS dec, i::FLOAT / 7 AS f32, i % 2 = 0 AS flag,
  CASE WHEN i % 3 = 0 THEN NULL ELSE 'row ' || i END AS text,
  CASE WHEN i % 4 = 0 THEN NULL ELSE [i, i + 1][1:1 + i % 3] END AS list,
  {'a': i, 'b': 'x' || i} AS struct, MAP {'k': i} AS map,
  [i, 2 * i, 3 * i]::INTEGER[3] AS triple, ('\\xAA\\xBB' || i::VARCHAR)::BLOB AS blob,
  DATE '2024-01-01' + i::INTEGER AS date, TIME '12:00:00' + INTERVAL (i) SECOND AS time,
  TIMESTAMP '2024-01-01' + INTERVAL (i) HOUR AS ts,
  TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i) MINUTE AS tstz,
  INTERVAL (i) DAY + INTERVAL (i) MONTH AS iv,
  (CASE i % 3 WHEN 0 THEN 'sad' WHEN 1 THEN 'ok' ELSE 'happy' END)::mood AS mood,
  ('00000000-0000-0000-0000-0000000000' || lpad(i::VARCHAR, 2, '0'))::UUID AS id
FROM range(50) t(i)
"""


def duckdb_file(path, settings):
    """DuckDB's Arrow export of every type above, in batches of 20 rows."""
    con = duckdb.connect()
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
    for setting in settings:
        con.execute(f"SET {setting}")
    reader = con.sql(DUCKDB_QUERY).arrow(batch_size=20)
    with pa.ipc.new_file(path, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def write(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    table = all_types()
    with pa.ipc.new_file(os.path.join(out_dir, "pyarrow_types.arrow"), table.schema) as writer:
        writer.write_table(table)
    for codec in ["lz4", "zstd"]:
        options = pa.ipc.IpcWriteOptions(compression=codec)
        path = os.path.join(out_dir, f"pyarrow_types_{codec}.arrow")
        with pa.ipc.new_file(path, table.schema, options=options) as writer:
            writer.write_table(table)
    dictionary_deltas(os.path.join(out_dir, "pyarrow_dictionary_deltas.arrow"))
    plain = pa.table({k: v for k, v in frame().items()})
    for codec in ["uncompressed", "lz4", "zstd"]:
        feather.write_feather(plain, os.path.join(out_dir, f"feather_{codec}.arrow"), compression=codec, chunksize=20)
    df = pd.DataFrame(frame())
    df["category"] = pd.Categorical([["x", "y", "z"][i % 3] for i in range(len(df))])
    df["when_tz"] = df["when"].dt.tz_localize("Europe/Paris")
    df.to_feather(os.path.join(out_dir, "pandas.arrow"))
    pf = pl.DataFrame(frame()).with_columns(
        pl.col("text").cast(pl.Categorical).alias("category"),
        pl.col("int").map_elements(lambda i: list(range(i % 4)), return_dtype=pl.List(pl.Int64)).alias("list"),
        pl.struct(["int", "text"]).alias("struct"),
    )
    for codec in ["uncompressed", "lz4", "zstd"]:
        pf.write_ipc(os.path.join(out_dir, f"polars_{codec}.arrow"), compression=codec)
    duckdb_file(os.path.join(out_dir, "duckdb.arrow"), [])
    arrow_1_5 = ["arrow_output_version = '1.5'", "arrow_output_list_view = true",
                 "produce_arrow_string_view = true", "arrow_lossless_conversion = true"]
    duckdb_file(os.path.join(out_dir, "duckdb_arrow_1_5.arrow"), arrow_1_5)
    for path in glob.glob(os.path.join(out_dir, "*.arrow")):
        if ".quiver." in path:
            continue
        with pa.ipc.open_file(path) as reader:
            read = reader.read_all()
        with pa.ipc.new_stream(path[: -len(".arrow")] + ".expected.arrows", read.schema) as writer:
            writer.write_table(read)


def duckdb_rows(table):
    """The rows DuckDB reads from an Arrow table (its types back from its own export)."""
    con = duckdb.connect()
    con.register("t", table)
    return con.sql("SELECT * FROM t").fetchall()


def check(out_dir):
    failures = []
    paths = sorted(glob.glob(os.path.join(out_dir, "*.quiver.*.arrow")))
    for path in paths:
        name = os.path.basename(path).split(".quiver.")[0]
        with pa.ipc.open_stream(os.path.join(out_dir, f"{name}.expected.arrows")) as reader:
            expected = reader.read_all()
        try:
            with pa.ipc.open_file(path) as reader:
                got = [reader.get_batch(i) for i in range(reader.num_record_batches)]
                schema = reader.schema
        except pa.ArrowInvalid as error:
            failures.append(f"{path}: pyarrow cannot read it: {error}")
            continue
        got = pa.Table.from_batches(got, schema=schema)
        if not got.equals(expected) or got.schema.metadata != expected.schema.metadata:
            failures.append(f"{path}: pyarrow read {got} expected {expected}")
        elif name.startswith("duckdb") and duckdb_rows(got) != duckdb_rows(expected):
            failures.append(f"{path}: DuckDB read {duckdb_rows(got)} expected {duckdb_rows(expected)}")
    for failure in failures:
        print(failure)
    print(f"checked {len(paths)} files, {len(failures)} failed")
    return 1 if failures or not paths else 0


if __name__ == "__main__":
    command, out = sys.argv[1], sys.argv[2]
    if command == "write":
        write(out)
    else:
        sys.exit(check(out))
