"""Dictionaries that change between batches, for tests/writer_pyarrow.rs: pyarrow writes
them, Quiver rewrites them, and pyarrow and polars read Quiver's output.

    .venv/bin/python tests/data/dictionaries.py write OUT_DIR
    .venv/bin/python tests/data/dictionaries.py check OUT_DIR

`write` writes `pyarrow.arrows`: a dictionary [a, b], then [a, b, c] (it grew), then
[x, y] (a true replacement), as pyarrow's default (`emit_dictionary_deltas=False`) sends
them: three whole dictionaries. `check` reads what Quiver wrote from its batches:

- `quiver.replacements.arrows` (default options): two replacements and no delta, read by
  pyarrow and by polars, which refuses delta dictionary batches;
- `quiver.deltas.arrows` (`dictionary_deltas`): the grown dictionary as a delta, then a
  replacement, read by pyarrow;
- `quiver.file.arrow` (the first two batches as an IPC file): the grown dictionary as a
  delta, the only way a file can hold it, read by pyarrow.

Each must equal pyarrow's batches (the file, value for value). Prints one line per failure; exits 1 if any.
"""

import os
import sys

import polars as pl
import pyarrow as pa

STEPS = [(["a", "b"], [0, 1, 0]), (["a", "b", "c"], [2, 0, 1, None]), (["x", "y"], [1, 0])]


def write(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    schema = pa.schema([("d", pa.dictionary(pa.int32(), pa.string())), ("n", pa.int64())])
    with pa.ipc.new_stream(os.path.join(out_dir, "pyarrow.arrows"), schema) as writer:
        for dictionary, indices in STEPS:
            array = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary))
            writer.write_batch(pa.record_batch([array, pa.array(range(len(indices)))], schema=schema))


def check(out_dir):
    failures = []
    path = lambda name: os.path.join(out_dir, name)  # noqa: E731
    with pa.ipc.open_stream(path("pyarrow.arrows")) as reader:
        source = list(reader)
    values = pa.Table.from_batches(source).column("d").to_pylist()
    streams = {"quiver.replacements.arrows": (0, 2), "quiver.deltas.arrows": (1, 1)}
    for name, (deltas, replaced) in streams.items():
        with pa.ipc.open_stream(path(name)) as reader:
            got = list(reader)
            stats = reader.stats
        if len(got) != len(source) or not all(g.equals(s) for g, s in zip(got, source)):
            failures.append(f"{name}: pyarrow read {got}, expected {source}")
        if (stats.num_dictionary_deltas, stats.num_replaced_dictionaries) != (deltas, replaced):
            failures.append(f"{name}: expected {deltas} deltas and {replaced} replacements, found {stats}")
    # polars reads pyarrow's replacements, and must read Quiver's default output as well.
    for name in ["pyarrow.arrows", "quiver.replacements.arrows"]:
        try:
            got = pl.read_ipc_stream(path(name))["d"].to_list()
        except Exception as error:  # polars raises its own exception types
            failures.append(f"{name}: polars cannot read it: {error}")
            continue
        if got != values:
            failures.append(f"{name}: polars read {got}, expected {values}")
    with pa.ipc.open_file(path("quiver.file.arrow")) as reader:
        got = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        stats = reader.stats
    # A file reader applies every delta before the first batch, so only values compare.
    got, want = (pa.Table.from_batches(b).to_pylist() for b in (got, source[:2]))
    if got != want:
        failures.append(f"quiver.file.arrow: pyarrow read {got}, expected {want}")
    if (stats.num_dictionary_deltas, stats.num_replaced_dictionaries) != (1, 0):
        failures.append(f"quiver.file.arrow: expected 1 delta and no replacement, found {stats}")
    for failure in failures:
        print(failure)
    print(f"checked 3 streams and a file, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    command, out = sys.argv[1], sys.argv[2]
    if command == "write":
        write(out)
    else:
        sys.exit(check(out))
