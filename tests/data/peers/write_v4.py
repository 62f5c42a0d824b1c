"""Writes pyarrow_v4_run_end.arrows: a run-end encoded column in V4 metadata, whose
writer gives it an (empty) validity buffer slot that V5 does not have. pyarrow reads it
back as written; tests/peer_defects.rs expects the same values from Quiver.

    .venv/bin/python tests/data/peers/write_v4.py
"""

import os

import pyarrow as pa

run_end = pa.RunEndEncodedArray.from_arrays(
    pa.array([2, 5, 6], pa.int32()), pa.array(["a", None, "c"])
)
table = pa.table(
    {
        "r": run_end,
        "s": pa.StructArray.from_arrays([run_end], names=["inner"]),
        "n": pa.array([1, 2, 3, None, 5, 6], pa.int64()),
    }
)
options = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4)
sink = pa.BufferOutputStream()
with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
    writer.write_table(table)
data = sink.getvalue()
assert pa.ipc.open_stream(data).read_all().equals(table)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyarrow_v4_run_end.arrows")
with open(path, "wb") as f:
    f.write(data.to_pybytes())
