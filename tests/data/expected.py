"""Writes what pyarrow reads from the interop streams, for the JS column tests.

    .venv/bin/python tests/data/expected.py [OUT_DIR]   (default: tests/data/types)

OUT_DIR gets generate.py's streams, copies of some gold streams (gold/*.stream) and
expected.json: for every stream, batch and column, the validity of each row and its
value in the representation of Quiver's `column.toArray()` (see src/js/views.js), or
null for the few gold streams pyarrow cannot read. Values
JSON cannot hold are tagged: {"$bigint": "12"}, {"$bytes": "hex"}, {"$number": "NaN"}.
"""

import json
import math
import os
import shutil
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(__file__))
import generate  # noqa: E402

GOLD_ROOT = os.path.join(os.path.dirname(__file__), "arrow-testing/integration")
GOLD = [
    "0.14.1/generated_primitive.stream",
    "1.0.0-littleendian/generated_datetime.stream",
    "1.0.0-littleendian/generated_decimal.stream",
    "1.0.0-littleendian/generated_decimal256.stream",
    "1.0.0-littleendian/generated_dictionary.stream",
    "1.0.0-littleendian/generated_dictionary_unsigned.stream",
    "1.0.0-littleendian/generated_map.stream",
    "1.0.0-littleendian/generated_nested.stream",
    "1.0.0-littleendian/generated_nested_large_offsets.stream",
    "1.0.0-littleendian/generated_null.stream",
    "1.0.0-littleendian/generated_primitive_large_offsets.stream",
    "1.0.0-littleendian/generated_recursive_nested.stream",
    "1.0.0-littleendian/generated_union.stream",
    "4.0.0-shareddict/generated_shared_dict.stream",
    "cpp-21.0.0/generated_binary_view.stream",
    "cpp-21.0.0/generated_custom_metadata.stream",
    "cpp-21.0.0/generated_decimal32.stream",
    "cpp-21.0.0/generated_decimal64.stream",
    "cpp-21.0.0/generated_duplicate_fieldnames.stream",
    "cpp-21.0.0/generated_duration.stream",
    "cpp-21.0.0/generated_extension.stream",
    "cpp-21.0.0/generated_interval_mdn.stream",
    "cpp-21.0.0/generated_large_binary.stream",
    "cpp-21.0.0/generated_list_view.stream",
    "cpp-21.0.0/generated_map_non_canonical.stream",
    "cpp-21.0.0/generated_nested_dictionary.stream",
    "cpp-21.0.0/generated_null_trivial.stream",
    "cpp-21.0.0/generated_primitive_no_batches.stream",
    "cpp-21.0.0/generated_primitive_zerolength.stream",
    "cpp-21.0.0/generated_run_end_encoded.stream",
]

# Read by Quiver and compared with apache-arrow JS only: pyarrow cannot read them.
# expected.json maps them to null.
GOLD_NOT_PYARROW = [
    "cpp-21.0.0/generated_interval.stream",  # YEAR_MONTH and DAY_TIME interval arrays
]

BIG = {pa.int64(), pa.uint64()}
LISTS = [pa.types.is_list, pa.types.is_large_list, pa.types.is_list_view, pa.types.is_large_list_view,
         pa.types.is_fixed_size_list]


def big(v):
    return {"$bigint": str(v)}


def number(v):
    v = float(v)
    return v if math.isfinite(v) else {"$number": repr(v).replace("inf", "Infinity").replace("nan", "NaN")}


def ms_of(raw, unit):
    """Epoch milliseconds as Arrow JS computes them (whole part plus fraction)."""
    divisor = {"s": None, "ms": 1, "us": 1000, "ns": 1000000}[unit]
    if divisor is None:
        return number(1000 * float(raw))
    q = (abs(raw) // divisor) * (1 if raw >= 0 else -1)  # truncated, as bigint division
    return number(float(q) + float(raw - q * divisor) / divisor)


def unscaled(d, scale):
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    n = n * 10**shift if shift >= 0 else n // 10 ** (-shift)
    return -n if sign else n


def encode(t, s):
    """The scalar `s` of type `t` as Quiver's toArray() gives it."""
    if not s.is_valid:
        return None
    if pa.types.is_integer(t):
        return big(s.as_py()) if t in BIG else s.as_py()
    if pa.types.is_floating(t):
        return number(s.as_py())
    if pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return s.as_py()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return {"$bytes": s.as_py().hex()}
    if pa.types.is_decimal(t):
        return big(unscaled(s.as_py(), t.scale))
    if pa.types.is_date32(t):
        return number(86400000 * s.cast(pa.int32()).as_py())
    if pa.types.is_date64(t):
        return number(s.cast(pa.int64()).as_py())
    if pa.types.is_time32(t):
        return s.cast(pa.int32()).as_py()
    if pa.types.is_time64(t):
        return big(s.cast(pa.int64()).as_py())
    if pa.types.is_timestamp(t):
        return ms_of(s.value, t.unit)
    if pa.types.is_duration(t):
        return big(s.value)
    if t == pa.month_day_nano_interval():
        v = s.as_py()
        return {"months": v.months, "days": v.days, "nanoseconds": big(v.nanoseconds)}
    if pa.types.is_map(t):
        entries = s.values
        keys, items = entries.field(0), entries.field(1)
        return [[encode(t.key_type, keys[k]), encode(t.item_type, items[k])] for k in range(len(entries))]
    if any(is_list(t) for is_list in LISTS):
        return [encode(t.value_type, v) for v in s.values]
    if pa.types.is_struct(t):
        return {t.field(k).name: encode(t.field(k).type, s[k]) for k in range(t.num_fields)}
    if pa.types.is_union(t):
        return encode(s.value.type, s.value)
    if pa.types.is_dictionary(t):
        return encode(t.value_type, s.value)
    if pa.types.is_run_end_encoded(t):
        return encode(t.value_type, s.value)
    if pa.types.is_null(t):
        return None
    if isinstance(t, pa.BaseExtensionType):
        return encode(t.storage_type, s.value)
    raise TypeError(f"no expected encoding for {t}")


def describe(path):
    with pa.ipc.open_stream(path) as reader:
        batches = []
        for batch in reader:
            columns = []
            for k, field in enumerate(batch.schema):
                array = batch.column(k)
                columns.append({
                    "name": field.name,
                    "valid": [s.is_valid for s in array],
                    "values": [encode(field.type, s) for s in array],
                })
            batches.append({"numRows": batch.num_rows, "columns": columns})
    return batches


def write_expected(out):
    generate.write_all(out)
    os.makedirs(os.path.join(out, "gold"), exist_ok=True)
    files = sorted(f for f in os.listdir(out) if f.endswith(".arrows"))
    for gold in GOLD + GOLD_NOT_PYARROW:
        name = os.path.join("gold", gold.replace("/", "__"))
        shutil.copyfile(os.path.join(GOLD_ROOT, gold), os.path.join(out, name))
        files.append(name)
    unread = {os.path.join("gold", g.replace("/", "__")) for g in GOLD_NOT_PYARROW}
    expected = {name: None if name in unread else describe(os.path.join(out, name)) for name in files}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f)
    return len(files)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "types")
    print(f"wrote expected values of {write_expected(out)} streams to {out}/expected.json")
