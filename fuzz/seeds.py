"""Seeds for the `decompress` fuzz target: real LZ4 and ZSTD frames from pyarrow's codecs
(the ones IPC bodies are written with), each after the 3-byte declared size the target
reads. The gold IPC streams that seed the other targets hold no bare frames.

    .venv/bin/python fuzz/seeds.py CORPUS_DIR
"""

import os
import random
import sys

import pyarrow as pa


def payloads():
    rng = random.Random(3)
    text = b"".join(b"row %d of the seed, " % (i % 700) for i in range(12_000))
    yield "empty", b""
    yield "short", b"quiver"
    yield "text", text[:5_000]
    yield "noise", rng.randbytes(3_000)
    # Over 64 KiB: several LZ4 blocks, linked, with a stored (incompressible) one.
    yield "blocks", rng.randbytes(70_000) + text[:150_000]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, data in payloads():
        declared = len(data).to_bytes(3, "little")
        for codec in ("lz4", "zstd"):
            frame = pa.Codec(codec).compress(data, asbytes=True)
            with open(os.path.join(out, f"seed-{codec}-{name}"), "wb") as f:
                f.write(declared + frame)


if __name__ == "__main__":
    main(sys.argv[1])
