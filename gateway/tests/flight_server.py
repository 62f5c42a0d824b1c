"""A pyarrow.flight server that the gateway tests start as a real upstream.

Prints "PORT <n>" once serving, then one line per event: "CANCELLED <tag>", and for a
DoPut "PUT BATCH <name> <i>" as each batch arrives, then "PUT STORED <name>" or "PUT
FAILED <name>".
Exits by itself after --lifetime seconds, so a crashed test leaves nothing behind.
With --tls-cert and --tls-key it serves grpc+tls; with --client-ca too it requires a
client certificate signed by that CA (mTLS).
With --basic-auth USER:PASSWORD, a Handshake with `authorization: Basic` and those
credentials is answered with `authorization: Bearer token-for-USER`, and every other call
must carry that header; wrong credentials get "wrong username or password". With it or
--echo-handshake, Handshake answers a payload P with "echo:" P.

Tickets (UTF-8):
  data:<part>:<rows>:<batches>  deterministic batches (id int64, value float64, name utf8)
  fail:<n>                      n batches, then a FlightServerError
  raise:<text>                  a ValueError(<text>), as a bug in a server would raise: pyarrow
                                sends its traceback in the status message
  slow:<tag>                    small batches 50 ms apart until cancelled; prints
                                "CANCELLED <tag>" when context.is_cancelled() turns true
  paced:<tag>:<ms>:<part>:<rows>:<batches>
                                the batches of data:<part>:<rows>:<batches>, <ms> apart;
                                prints "PACED START <ticket> <t>" before the first and
                                "PACED END <ticket> <t>" after the last, t in seconds of
                                time.monotonic() (CLOCK_MONOTONIC, one clock for every
                                process of the machine)
  hold:<tag>                    one small batch, then nothing until cancelled; prints
                                "CANCELLED <tag>" then, whether the generator was waiting
                                or still at its first batch
  big                           one 1.5M-row int64 batch (12 MB, above gRPC's 4 MiB default)
  meta:<n>                      n batches with app_metadata b"m<i>"
  dict                          one 3-row batch of a dictionary-encoded utf8 column "d"
  put:<name>                    what a DoPut to path [<name>] stored; a DoPut whose call
                                was cancelled stores nothing

A DoPut answers two PutResults: "stored <rows> rows", then the app_metadata it read,
joined by ","; to a path starting "chunks", a third: each chunk it read as
"batch:<app_metadata>" or, without data, "none:<app_metadata>", joined by ";".

ListFlights answers the ["parts"] flight; GetSchema the data schema; ListActions "dump".
DoAction "headers" returns the call's request headers as a JSON object of lists.
DoAction "RenewFlightEndpoint" answers the request's endpoint an hour later (its expiration
plus an hour, or now plus an hour if it had none), with app_metadata "renewed".
GetFlightInfo on path ["parts"] answers part 0 here and part 1 at each --peer; on
["forbidden", <uri>] it answers one endpoint at <uri>; on ["endpoints", <json>] the endpoints
the JSON list of {"ticket": <text>, "locations": [<uri>, ...]} names. DoAction "dump" returns the
uncompressed IPC stream of the ticket in its body, the reference the tests compare with.
"""

import argparse
import base64
import json
import os
import threading
import time

import pyarrow as pa
import pyarrow.flight as flight

ROWS, BATCHES = 20_000, 5

# print() writes a line and its newline in two writes: lines printed at once from
# several of the server's threads came out run together, and the tests missed them.
printing = threading.Lock()


def say(line):
    """Prints one whole line for the test to read, at once."""
    with printing:
        print(line, flush=True)


def make_batch(part, index, rows):
    start = (part * 1_000_000) + index * rows
    ids = pa.array(range(start, start + rows), pa.int64())
    values = pa.array([i * 0.5 for i in range(start, start + rows)], pa.float64())
    names = pa.array([f"n{i % 7}" for i in range(start, start + rows)], pa.string())
    return pa.record_batch([ids, values, names], names=["id", "value", "name"])


SCHEMA = make_batch(0, 0, 0).schema


class TokenCheck(flight.ServerMiddlewareFactory):
    def __init__(self, token):
        self.expected = [f"Bearer {token}"]

    def start_call(self, info, headers):
        if headers.get("authorization") != self.expected:
            raise flight.FlightUnauthenticatedError("bad or missing bearer token")
        return None


class BasicAuth(flight.ServerMiddlewareFactory):
    def __init__(self, credentials, delay):
        self.basic = "Basic " + base64.b64encode(credentials.encode()).decode()
        self.token = "token-for-" + credentials.split(":")[0]
        self.delay = delay

    def start_call(self, info, headers):
        auth = headers.get("authorization", [""])[0]
        if info.method == flight.FlightMethod.HANDSHAKE and auth.startswith("Basic "):
            time.sleep(self.delay)
            if auth != self.basic:
                raise flight.FlightUnauthenticatedError("wrong username or password")
            return IssueToken(self.token)
        if auth != f"Bearer {self.token}":
            raise flight.FlightUnauthenticatedError("bad or missing bearer token")
        return None


class IssueToken(flight.ServerMiddleware):
    def __init__(self, token):
        self.token = token

    def sending_headers(self):
        return {"authorization": f"Bearer {self.token}"}


class EchoHandshake(flight.ServerAuthHandler):
    """Answers the Handshake's payload; lets every call through (auth is elsewhere)."""

    def authenticate(self, outgoing, incoming):
        outgoing.write(b"echo:" + incoming.read())

    def is_valid(self, token):
        return ""


class Headers(flight.ServerMiddleware):
    def __init__(self, headers):
        self.headers = headers


class RecordHeaders(flight.ServerMiddlewareFactory):
    def start_call(self, info, headers):
        return Headers(headers)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Server(flight.FlightServerBase):
    def __init__(self, args):
        middleware = {"headers": RecordHeaders()}
        scheme, server_options = "grpc", {}
        if args.token:
            middleware["auth"] = TokenCheck(args.token)
        if args.basic_auth:
            middleware["auth"] = BasicAuth(args.basic_auth, args.handshake_delay)
        if args.basic_auth or args.echo_handshake:
            server_options["auth_handler"] = EchoHandshake()
        if args.tls_cert:
            scheme = "grpc+tls"
            server_options["tls_certificates"] = [
                flight.CertKeyPair(cert=read(args.tls_cert), key=read(args.tls_key))
            ]
        if args.client_ca:
            server_options["verify_client"] = True
            server_options["root_certificates"] = read(args.client_ca)
        super().__init__(f"{scheme}://127.0.0.1:{args.port}", middleware=middleware, **server_options)
        self.location = f"{scheme}://127.0.0.1:{self.port}"
        self.peers = args.peer
        self.options = pa.ipc.IpcWriteOptions(
            compression=None if args.compression == "none" else args.compression
        )
        self.stored = {}

    def batches(self, ticket):
        kind, _, rest = ticket.partition(":")
        if kind == "data":
            part, rows, count = (int(x) for x in rest.split(":"))
            return SCHEMA, (make_batch(part, i, rows) for i in range(count))
        if kind == "paced":
            return self.batches("data:" + rest.split(":", 2)[2])
        if kind == "dict":
            column = pa.array(["a", "b", "a"]).dictionary_encode()
            table = pa.table({"d": column})
            return table.schema, iter(table.to_batches())
        if kind == "big":
            ids = pa.array(range(1_500_000), pa.int64())
            big = pa.record_batch([ids], names=["id"])
            return big.schema, iter([big])
        if kind == "put":
            table = self.stored[rest]
            return table.schema, iter(table.to_batches())
        raise flight.FlightServerError(f"unknown ticket {ticket}")

    def do_get(self, context, ticket):
        text = ticket.ticket.decode()
        kind, _, rest = text.partition(":")
        if kind == "fail":
            return flight.GeneratorStream(SCHEMA, self.failing(int(rest)), options=self.options)
        if kind == "raise":
            raise ValueError(rest)
        if kind == "meta":
            return flight.GeneratorStream(SCHEMA, self.with_metadata(int(rest)), options=self.options)
        if kind == "slow":
            return flight.GeneratorStream(SCHEMA, self.slow(context, rest), options=self.options)
        if kind == "hold":
            return flight.GeneratorStream(SCHEMA, self.hold(context, rest), options=self.options)
        if kind == "paced":
            return flight.GeneratorStream(SCHEMA, self.paced(text), options=self.options)
        schema, batches = self.batches(text)
        if kind == "dict":
            # GeneratorStream sends no dictionaries; RecordBatchStream does.
            return flight.RecordBatchStream(pa.Table.from_batches(batches, schema), options=self.options)
        return flight.GeneratorStream(schema, batches, options=self.options)

    def failing(self, n):
        for i in range(n):
            yield make_batch(0, i, 1000)
        raise flight.FlightServerError(f"boom after {n} batches")

    def with_metadata(self, n):
        for i in range(n):
            yield make_batch(0, i, 100), pa.py_buffer(f"m{i}".encode())

    def slow(self, context, tag):
        for i in range(2000):
            time.sleep(0.05)
            if context.is_cancelled():
                say(f"CANCELLED {tag}")
                return
            yield make_batch(0, i, 100)

    def hold(self, context, tag):
        # A call cancelled while its first batch is still being written never resumes
        # the generator: pyarrow closes it at the yield, and `finally` still reports it.
        try:
            yield make_batch(0, 0, 100)
            while not context.is_cancelled():
                time.sleep(0.05)
        finally:
            if context.is_cancelled():
                say(f"CANCELLED {tag}")

    def paced(self, ticket):
        pause = int(ticket.split(":")[2]) / 1000
        _, batches = self.batches(ticket)
        say(f"PACED START {ticket} {time.monotonic()}")
        for i, batch in enumerate(batches):
            if i:
                time.sleep(pause)
            yield batch
        say(f"PACED END {ticket} {time.monotonic()}")

    def get_flight_info(self, context, descriptor):
        path = [p.decode() for p in descriptor.path]
        if path == ["parts"]:
            locations = [self.location] + self.peers
            endpoints = [
                flight.FlightEndpoint(f"data:{i}:{ROWS}:{BATCHES}".encode(), [loc])
                for i, loc in enumerate(locations)
            ]
        elif len(path) == 2 and path[0] == "forbidden":
            endpoints = [flight.FlightEndpoint(b"data:0:10:1", [path[1]])]
        elif len(path) == 2 and path[0] == "endpoints":
            endpoints = [
                flight.FlightEndpoint(e["ticket"].encode(), e["locations"])
                for e in json.loads(path[1])
            ]
        else:
            raise flight.FlightServerError(f"unknown path {path}")
        return flight.FlightInfo(SCHEMA, descriptor, endpoints, -1, -1)

    def list_flights(self, context, criteria):
        yield self.get_flight_info(context, flight.FlightDescriptor.for_path("parts"))

    def get_schema(self, context, descriptor):
        return flight.SchemaResult(SCHEMA)

    def list_actions(self, context):
        return [flight.ActionType("dump", "the reference IPC stream of a ticket")]

    def do_put(self, context, descriptor, reader, writer):
        name = descriptor.path[0].decode()
        if name == "refused":
            # Answers before reading the upload, as Flight SQL servers refuse a command.
            raise NotImplementedError("uploads to refused are not implemented")
        batches, metadata, chunks = [], [], []
        if name.startswith("stall"):
            # Reads nothing until cancelled: the upload waits in the gateway.
            while not context.is_cancelled():
                time.sleep(0.05)
        if name.startswith("pause"):
            # Reads nothing for a while, then all of it.
            time.sleep(2)
        try:
            for chunk in reader:
                meta = chunk.app_metadata
                meta = "" if meta is None else meta.to_pybytes().decode()
                if meta:
                    metadata.append(meta)
                chunks.append(("none:" if chunk.data is None else "batch:") + meta)
                if chunk.data is None:
                    continue
                say(f"PUT BATCH {name} {len(batches)}")
                batches.append(chunk.data)
                if name.startswith("slow"):
                    # Read slowly, so that a client cancels before its upload's end.
                    time.sleep(0.01)
            # gRPC ends the reader the same way when the client half-closes and when the
            # call is reset: only a call that is not cancelled sent its whole upload.
            if context.is_cancelled():
                raise flight.FlightCancelledError("the upload was cancelled")
        except Exception:
            say(f"PUT FAILED {name}")
            raise
        table = pa.Table.from_batches(batches, reader.schema)
        self.stored[name] = table
        say(f"PUT STORED {name}")
        writer.write(pa.py_buffer(f"stored {table.num_rows} rows".encode()))
        writer.write(pa.py_buffer(",".join(metadata).encode()))
        if name.startswith("chunks"):
            writer.write(pa.py_buffer(";".join(chunks).encode()))

    def do_action(self, context, action):
        if action.type == "RenewFlightEndpoint":
            return [flight.Result(renewed(action.body.to_pybytes()).serialize())]
        if action.type == "headers":
            headers = context.get_middleware("headers").headers
            return [flight.Result(json.dumps(headers, sort_keys=True).encode())]
        if action.type != "dump":
            raise flight.FlightServerError(f"unknown action {action.type}")
        schema, batches = self.batches(action.body.to_pybytes().decode())
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as w:
            for b in batches:
                w.write_batch(b)
        return [flight.Result(sink.getvalue())]


def renewed(body):
    """The endpoint of a RenewFlightEndpointRequest (field 1, its only one), renewed."""
    if body[:1] != b"\x0a":
        raise flight.FlightServerError("expected a RenewFlightEndpointRequest")
    length, shift, at = 0, 0, 1
    while True:
        byte = body[at]
        length |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if byte < 0x80:
            break
    endpoint = flight.FlightEndpoint.deserialize(body[at:at + length])
    expires = endpoint.expiration_time
    base = time.time_ns() if expires is None else expires.value
    later = pa.scalar(base + 3600 * 10**9, pa.timestamp("ns", "UTC"))
    return flight.FlightEndpoint(endpoint.ticket, endpoint.locations, later, "renewed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compression", choices=["none", "lz4", "zstd"], default="none")
    p.add_argument("--token")
    p.add_argument("--basic-auth", metavar="USER:PASSWORD")
    p.add_argument("--handshake-delay", type=float, default=0, metavar="SECONDS")
    p.add_argument("--echo-handshake", action="store_true")
    p.add_argument("--peer", action="append", default=[])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=180)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--client-ca")
    args = p.parse_args()
    server = Server(args)
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()
    say(f"PORT {server.port}")
    server.serve()


if __name__ == "__main__":
    main()
