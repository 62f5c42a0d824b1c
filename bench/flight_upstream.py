"""The Flight benchmark's upstream: a pyarrow.flight server that bench/browser.mjs puts
behind quiver-gateway, so that the gateway's CPU time is its own (`--demo` generates its
batches inside the gateway's process).

Tickets and GetFlightInfo `cmd`s take the demo service's form and schema (id int64, value
float64, label utf8): `rows=R&batches=N[&part=P]`, and `partitions=K` in a cmd answers K
endpoints with no location, which the gateway reads from this server. Each stream repeats
one batch built once per size, from C++ (RecordBatchStream), so that Python does no work
per batch. Prints "PORT <n>" once serving; exits by itself after --lifetime seconds.
"""

import argparse
import functools
import os
import threading
from urllib.parse import parse_qs

import pyarrow as pa
import pyarrow.flight as flight

LABELS = ["alpha", "beta", "gamma", "delta"]


@functools.lru_cache(maxsize=8)
def make_batch(rows):
    ids = range(rows)
    return pa.record_batch(
        [
            pa.array(ids, pa.int64()),
            pa.array([(i % 1000) * 0.25 for i in ids], pa.float64()),
            pa.array([LABELS[i % 4] for i in ids], pa.string()),
        ],
        names=["id", "value", "label"],
    )


def parse(text):
    """The numbers of `rows=R&batches=N&...`, with the demo's defaults."""
    fields = {k: int(v[0]) for k, v in parse_qs(text, strict_parsing=True).items()}
    unknown = set(fields) - {"rows", "batches", "part", "partitions"}
    if unknown:
        raise flight.FlightServerError(f"unknown ticket fields {sorted(unknown)} in {text!r}")
    return fields.get("rows", 65536), fields.get("batches", 16), fields.get("partitions", 1)


class Server(flight.FlightServerBase):
    def do_get(self, context, ticket):
        rows, batches, _ = parse(ticket.ticket.decode())
        batch = make_batch(rows)
        return flight.RecordBatchStream(pa.Table.from_batches([batch] * batches))

    def get_flight_info(self, context, descriptor):
        cmd = descriptor.command.decode()
        rows, batches, partitions = parse(cmd)
        endpoints = [
            flight.FlightEndpoint(f"rows={rows}&batches={batches}&part={p}".encode(), [])
            for p in range(partitions)
        ]
        schema = make_batch(0).schema
        return flight.FlightInfo(schema, descriptor, endpoints, rows * batches * partitions, -1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lifetime", type=float, default=3600)
    args = p.parse_args()
    server = Server("grpc://127.0.0.1:0")
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()
    print(f"PORT {server.port}", flush=True)
    server.serve()


if __name__ == "__main__":
    main()
