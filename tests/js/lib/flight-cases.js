// The Flight client tests, run in Node (tests/js/flight.test.js, with the `ws` package)
// and in headless Chromium (tests/browser/flight.test.js) against the same real
// processes: pyarrow Flight servers behind quiver-gateway (see flight-env.mjs).
//
// `env`: { gateway, strictGateway, demoGateway, servers: { main, peer, lz4, zstd, token },
// saw(line, ms) }
// `WebSocket`: the class to connect with (undefined: the global one); `ForeignWebSocket`
// one whose Origin the strict gateway refuses (undefined: the page's own origin).

const utf8 = (s) => new TextEncoder().encode(s);
const text = (b) => new TextDecoder().decode(b);
const DATA = 'data:0:20000:5';
let unique = 0;
const tag = (name) => `${name}-${Date.now()}-${unique++}`;

export function flightCases({ test, assert, quiver, env, WebSocket, ForeignWebSocket }) {
  const { FlightClient, FlightError, tableFromIPC } = quiver;
  const connect = (options = {}) => FlightClient.connect(env.gateway, { WebSocket, ...options });

  /** What pyarrow wrote for `ticket`, uncompressed, through DoAction "dump". */
  async function reference(client, ticket) {
    const [body] = await client.doAction('dump', utf8(ticket));
    return tableFromIPC(body);
  }

  function assertSameRows(actual, expected) {
    assert.equal(actual.numRows, expected.numRows);
    assert.deepEqual(actual.schema.fields.map((f) => f.name), expected.schema.fields.map((f) => f.name));
    assert.deepEqual(actual.toArray(), expected.toArray());
  }

  async function rejectsWith(promise, code, message) {
    await assert.rejects(promise, (error) => {
      assert.ok(error instanceof FlightError, `expected a FlightError, found ${error}`);
      assert.equal(error.code, code, `expected code ${code}, found ${error.code}: ${error.message}`);
      if (message) assert.match(error.message, message);
      return true;
    });
  }

  test('flight: metadata calls (listFlights, getFlightInfo, getSchema, listActions)', async () => {
    const client = await connect();
    try {
      const flights = await client.listFlights();
      assert.equal(flights.length, 1);
      assert.deepEqual(flights[0].descriptor, { path: ['parts'] });
      const info = await client.getFlightInfo({ path: ['parts'] });
      assert.deepEqual(info.endpoints.map((e) => e.locations), [[env.servers.main], [env.servers.peer]]);
      assert.deepEqual(info.schema.fields.map((f) => f.name), ['id', 'value', 'name']);
      const schema = await client.getSchema({ path: ['parts'] });
      assert.deepEqual(schema.fields.map((f) => f.name), ['id', 'value', 'name']);
      assert.deepEqual(await client.listActions(),
        [{ type: 'dump', description: 'the reference IPC stream of a ticket' }]);
      // pyarrow's FlightServerError travels as UNKNOWN (2).
      await rejectsWith(client.getFlightInfo({ path: ['nope'] }), 2, /unknown path/);
    } finally {
      client.close();
    }
  });

  for (const compression of ['none', 'lz4', 'zstd']) {
    test(`flight: DoGet equals pyarrow's data (${compression})`, async () => {
      const client = await connect();
      try {
        const location = { none: undefined, lz4: env.servers.lz4, zstd: env.servers.zstd }[compression];
        const stream = client.doGet(DATA, { location });
        const batches = [];
        for await (const batch of stream) batches.push(batch);
        assert.equal(batches.length, 5);
        const stats = stream.stats;
        assert.equal(stats.bytesPushed, stats.ipcBytesReceived);
        // Every received IPC byte was copied exactly once, into its place. LZ4 decodes
        // into the new buffers; ruzstd decodes into its window and copies out of it, which
        // counts too (tests/writer.rs checks the exact figure natively).
        if (compression === 'zstd') assert.ok(stats.bytesCopied > stats.ipcBytesReceived);
        else assert.equal(stats.bytesCopied, stats.ipcBytesReceived);
        batches.forEach((b) => b.free());
        const table = await client.doGet(DATA, { location }).readAll();
        assertSameRows(table, await reference(client, DATA));
      } finally {
        client.close();
      }
    });
  }

  test('flight: a batch over 8 MB, with onProgress', async () => {
    const client = await connect();
    try {
      const seen = [];
      const table = await client.doGet('big', { onProgress: (p) => seen.push(p.bytesReceived) }).readAll();
      assert.equal(table.numRows, 1_500_000);
      assert.ok(seen.length > 8, 'one progress call per frame');
      assert.ok(seen.at(-1) > 12_000_000);
      table.free();
    } finally {
      client.close();
    }
  });

  test('flight: credit is granted as batches are consumed, so a slow reader holds the server', async () => {
    const client = await connect();
    try {
      const window = 2 << 20;
      // 50 batches of about 450 KB: 22 MB, far more than the window.
      const stream = client.doGet('data:0:20000:50', { creditWindow: window });
      assert.equal(stream.creditWindow, window);
      (await stream.next()).free();
      await new Promise((r) => setTimeout(r, 500));
      // Grants go back in steps of at least 1 MiB (the segment size): one consumed batch
      // earns none yet, so the gateway has sent no more than the window.
      const held = stream.stats.bytesReceived;
      assert.ok(held <= window, `received ${held} bytes with a window of ${window}`);
      let batches = 1;
      for await (const batch of stream) {
        batches++;
        batch.free();
      }
      assert.equal(batches, 50);
      assert.ok(stream.stats.bytesReceived > 20_000_000);
    } finally {
      client.close();
    }
  });

  test('flight: readChunk gives each batch the app_metadata of its message, in order; next() skips it', async () => {
    const client = await connect();
    try {
      const stream = client.doGet('meta:3');
      const seen = [];
      for (let chunk = await stream.readChunk(); chunk !== undefined; chunk = await stream.readChunk()) {
        // A copy in JS memory, not a view of wasm memory.
        assert.equal(chunk.appMetadata.buffer.byteLength, chunk.appMetadata.length);
        seen.push([chunk.data.numRows, text(chunk.appMetadata)]);
        chunk.data.free();
      }
      assert.deepEqual(seen, [[100, 'm0'], [100, 'm1'], [100, 'm2']]);
      const rows = [];
      for await (const batch of client.doGet('meta:3')) {
        rows.push(batch.numRows);
        batch.free();
      }
      assert.deepEqual(rows, [100, 100, 100]);
      // Messages without app_metadata (the schema, a dictionary) make no chunk.
      const dict = client.doGet('dict');
      const chunk = await dict.readChunk();
      assert.deepEqual([chunk.data.numRows, chunk.appMetadata], [3, null]);
      chunk.data.free();
      assert.equal(await dict.readChunk(), undefined);
    } finally {
      client.close();
    }
  });

  test('flight: DoPut sends app_metadata with its batch, after its dictionary, or alone', async () => {
    const client = await connect();
    const put = client.startPut({ path: [tag('chunks')] });
    const source = await client.doGet('data:0:10:2').readAll();
    const [a, b] = source.batches;
    const dict = await client.doGet('dict').readAll();
    const [d] = dict.batches;
    try {
      assert.throws(() => put.writeMetadata(utf8('early')),
        { message: 'write at least one batch before writeMetadata(): the schema comes first' });
      assert.throws(() => put.write(a, new Uint8Array(1 << 20)), {
        message: 'app_metadata of 1048576 bytes is over the 1048575 that fit in one frame',
      });
      await put.write(a, utf8('first'));
      // Empty, it would end the upload for pyarrow's reader, losing what follows.
      assert.throws(() => put.writeMetadata(new Uint8Array()), {
        message: 'writeMetadata() needs at least one byte: an empty FlightData would end the upload for Arrow C++ servers',
      });
      await put.write(b);
      await put.writeMetadata(utf8('alone'));
      // pyarrow's reader reads each chunk with the app_metadata of its FlightData.
      assert.deepEqual((await put.finish()).map(text),
        ['stored 20 rows', 'first,alone', 'batch:first;batch:;none:alone']);
      // Arrow C++ would read app_metadata sent with the dictionary as the batch's none.
      const dictPut = client.startPut({ path: [tag('chunks')] });
      await dictPut.write(d, utf8('with the dictionary batch'));
      assert.deepEqual((await dictPut.finish()).map(text),
        ['stored 3 rows', 'with the dictionary batch', 'batch:with the dictionary batch']);
      dictPut.free();
    } finally {
      for (const x of [put, a, b, source, d, dict]) x.free();
      client.close();
    }
  });

  test('flight: a credit window too small for a batch\'s app_metadata fails the stream instead of hanging', async () => {
    const client = await connect();
    try {
      // Each batch's FlightData carries app_metadata ("m0", ...), which the gateway sends
      // whole, with at least one IPC byte: 3 bytes of credit at once.
      await rejectsWith(client.doGet('meta:3', { creditWindow: 2 }).readAll(), 8,
        /needs 3 bytes of credit at once \(its app_metadata\), more than the stream's credit window of 2 bytes/);
      // A small window that covers it still cuts the stream into small frames.
      const stream = client.doGet('meta:3', { creditWindow: 64 });
      assert.equal(stream.creditWindow, 64);
      const table = await stream.readAll();
      assert.equal(table.numRows, 300);
      table.free();
    } finally {
      client.close();
    }
  });

  test('flight: fetchAll reads endpoints on two servers, parallel and ordered', async () => {
    const client = await connect();
    try {
      const info = await client.getFlightInfo({ path: ['parts'] });
      const expected = [await reference(client, 'data:0:20000:5'), await reference(client, 'data:1:20000:5')];
      for (const options of [{}, { ordered: true }, { connections: 2 }]) {
        const table = await client.fetchAll(info, options);
        assert.equal(table.numRows, 200_000);
        assert.deepEqual(table.toArray(), [...expected[0].toArray(), ...expected[1].toArray()]);
        table.free();
      }
    } finally {
      client.close();
    }
  });

  test('flight: DoPut round trip, from a Table and from batches', async () => {
    const client = await connect();
    try {
      const table = await reference(client, DATA);
      const name = tag('put');
      const results = await client.doPut({ path: [name] }, table);
      assert.deepEqual(results.map(text), ['stored 100000 rows', '']);
      assertSameRows(await client.doGet(`put:${name}`).readAll(), table);
      const batches = table.batches.slice(0, 2);
      const results2 = await client.doPut({ path: [name] }, batches);
      assert.equal(text(results2[0]), 'stored 40000 rows');
      assert.equal(batches[0].numRows, 20_000, 'the batches stay the caller\'s');
      assert.equal((await client.doGet(`put:${name}`).readAll()).numRows, 40_000);
      // Something else is refused before an upload starts, with what it expects.
      await assert.rejects(client.doPut({ path: [name] }, batches[0]),
        /doPut expects a Quiver Table or an array of Quiver RecordBatches/);
      assert.equal(batches[0].numRows, 20_000);
      // So is a bad descriptor, and the batch handles taken from a Table are freed at once.
      const before = quiver.memoryStats().liveBytes;
      const refused = client.doPut({ path: 5 }, table);
      assert.equal(quiver.memoryStats().liveBytes, before);
      await assert.rejects(refused, { message: /^a descriptor must be \{ path: string\[\] \}/ });
      assert.equal((await client.doGet(`put:${name}`).readAll()).numRows, 40_000);
    } finally {
      client.close();
    }
  });

  test('flight: a bad token gives UNAUTHENTICATED, the right one data', async () => {
    const bad = await connect({ token: 'wrong' });
    const good = await connect({ token: 's3cret' });
    try {
      const location = env.servers.token;
      await rejectsWith(bad.doGet('data:0:10:1', { location }).readAll(), 16, /bad or missing bearer token/);
      assert.equal((await good.doGet('data:0:10:1', { location }).readAll()).numRows, 10);
    } finally {
      bad.close();
      good.close();
    }
  });

  test('flight: a server error after 3 batches arrives after the 3 batches', async () => {
    const client = await connect();
    try {
      const stream = client.doGet('fail:3');
      const rows = [];
      await rejectsWith((async () => {
        for await (const batch of stream) rows.push(batch.numRows);
      })(), 2, /boom after 3 batches/);
      assert.deepEqual(rows, [1000, 1000, 1000]);
      await rejectsWith(client.doGet('fail:3').readAll(), 2, /boom after 3 batches/);
    } finally {
      client.close();
    }
  });

  test('flight: a PutStream freed before finish() cancels its upload, which stores nothing', async () => {
    const client = await connect();
    const batch = quiver.batchFromColumns({ x: new Float64Array(1000) });
    try {
      const name = tag('freed-put');
      const put = client.startPut({ path: [name] });
      await put.write(batch);
      assert.ok(await env.saw(`PUT BATCH ${name} 0`, 10_000), 'the first batch reached the server');
      put.free();
      assert.ok(await env.saw(`PUT FAILED ${name}`, 10_000), 'the server saw the upload cancelled');
      // The gateway passes pyarrow's message without its Python detail (the KeyError).
      await rejectsWith(client.doGet(`put:${name}`).readAll(), 5, new RegExp(`^NOT_FOUND: '${name}'`));
      // The connection is still usable.
      assert.equal((await client.doGet('data:0:10:1').readAll()).numRows, 10);
    } finally {
      batch.free();
      client.close();
    }
  });

  test('flight: finish() carries an upload to its end after its PutStream and client are freed', async () => {
    const client = await connect();
    const batch = quiver.batchFromColumns({ x: new Float64Array(1000) });
    const name = tag('finished-put');
    try {
      const put = client.startPut({ path: [name] });
      await put.write(batch);
      const finished = put.finish();
      // Nothing holds the connection now but the promise.
      put.free();
      client.free();
      assert.equal(text((await finished)[0]), 'stored 1000 rows');
    } finally {
      batch.free();
    }
    const reader = await connect();
    try {
      assert.equal((await reader.doGet(`put:${name}`).readAll()).numRows, 1000);
    } finally {
      reader.close();
    }
  });

  test('flight: once an upload has failed, write, writeMetadata and finish reject with its FlightError', async () => {
    const client = await connect();
    const batch = quiver.batchFromColumns({ x: new Float64Array(10) });
    const refused = /uploads to refused are not implemented/;
    try {
      const put = client.startPut({ path: ['refused'] });
      // The server refuses before it reads: the write may or may not have failed yet.
      await put.write(batch).catch(() => {});
      await rejectsWith(put.finish(), 12, refused);
      for (const call of [() => put.write(batch), () => put.writeMetadata(new Uint8Array(1)), () => put.finish()]) {
        // A promise that rejects, not a throw at once.
        let promise;
        let thrown;
        try {
          promise = call();
        } catch (error) {
          thrown = error;
        }
        assert.equal(thrown, undefined);
        await rejectsWith(promise, 12, refused);
      }
      put.free();
      // So does a cancelled one, with CANCELLED.
      const cancelled = client.startPut({ path: [tag('cancelled-put')] });
      cancelled.cancel();
      await rejectsWith(cancelled.write(batch), 1);
      cancelled.free();
    } finally {
      batch.free();
      client.close();
    }
  });

  test('flight: aborting doPut\'s signal cancels the upload, which stores nothing', async () => {
    const client = await connect();
    const batch = quiver.batchFromColumns({ x: new Float64Array(1000) });
    try {
      // The server reads it slowly: an abort once the whole upload was sent may come
      // after the server stored it.
      const name = tag('slow-aborted-put');
      await rejectsWith(client.doPut({ path: [name] }, [batch], { signal: AbortSignal.abort() }), 1);
      await assert.rejects(client.doPut({ path: [name] }, [batch], { signal: 'soon' }),
        { name: 'TypeError', message: 'option signal must be an AbortSignal' });
      // Mid-upload: the batches keep coming until the abort.
      const controller = new AbortController();
      const many = Array.from({ length: 1000 }, () => batch);
      const upload = client.doPut({ path: [name] }, many, { signal: controller.signal });
      assert.ok(await env.saw(`PUT BATCH ${name} 0`, 10_000), 'the first batch reached the server');
      controller.abort();
      await rejectsWith(upload, 1);
      assert.ok(await env.saw(`PUT FAILED ${name}`, 10_000), 'the server saw the upload cancelled');
      await rejectsWith(client.doGet(`put:${name}`).readAll(), 5);
      assert.equal(batch.numRows, 1000, 'the batches stay the caller\'s');
    } finally {
      batch.free();
      client.close();
    }
  });

  test('flight: AbortSignal cancels the upstream call (context.is_cancelled())', async () => {
    const client = await connect();
    try {
      const controller = new AbortController();
      const name = tag('abort');
      const stream = client.doGet(`slow:${name}`, { signal: controller.signal });
      assert.equal((await stream.next()).numRows, 100);
      controller.abort();
      await rejectsWith((async () => { while (await stream.next()); })(), 1);
      assert.ok(await env.saw(`CANCELLED ${name}`, 10_000), 'the pyarrow server saw the cancellation');
      // The connection is still usable.
      assert.equal((await client.doGet('data:0:10:1').readAll()).numRows, 10);
    } finally {
      client.close();
    }
  });

  test('flight: a stream freed while its next() waits cancels the upstream call once that read has its batch', async () => {
    const client = await connect();
    try {
      const name = tag('freed-waiting');
      const stream = client.doGet(`slow:${name}`);
      const pending = stream.next();
      stream.free();
      const batch = await pending;
      assert.equal(batch.numRows, 100);
      batch.free();
      assert.ok(await env.saw(`CANCELLED ${name}`, 10_000), 'the pyarrow server saw the cancellation');
      assert.equal((await client.doGet('data:0:10:1').readAll()).numRows, 10);
    } finally {
      client.close();
    }
  });

  test('flight: closing the client mid-stream cancels the upstream call', async () => {
    const client = await connect();
    const name = tag('disconnect');
    const stream = client.doGet(`slow:${name}`);
    assert.equal((await stream.next()).numRows, 100);
    client.close();
    await rejectsWith((async () => { while (await stream.next()); })(), 1, /closed the connection/);
    assert.ok(await env.saw(`CANCELLED ${name}`, 10_000), 'the pyarrow server saw the cancellation');
  });

  test('flight: a location the gateway does not allow is refused', async () => {
    const client = await connect();
    try {
      const info = await client.getFlightInfo({ path: ['forbidden', 'grpc://127.0.0.1:1'] });
      await rejectsWith(client.fetchAll(info), 7);
    } finally {
      client.close();
    }
  });

  test('flight: pollFlightInfo follows a long-running query to its end', async () => {
    const client = await FlightClient.connect(env.demoGateway, { WebSocket });
    try {
      // The demo's query completes at its 4th poll, with one more of its 4 parts each time.
      let poll = await client.pollFlightInfo({ cmd: 'rows=10&batches=2&partitions=4&polls=4' });
      const seen = [];
      while (poll.descriptor) {
        seen.push([poll.progress, poll.info.endpoints.length]);
        assert.ok(poll.expirationTimeMs > Date.now(), `expires at ${poll.expirationTimeMs}`);
        poll = await client.pollFlightInfo(poll.descriptor);
      }
      assert.deepEqual(seen, [[0.25, 1], [0.5, 2], [0.75, 3]]);
      assert.equal(poll.progress, 1);
      assert.equal(poll.expirationTimeMs, undefined);
      assert.equal(poll.info.totalRecords, 80);
      const table = await client.fetchAll(poll.info);
      assert.equal(table.numRows, 80);
      table.free();
    } finally {
      client.close();
    }
  });

  test('flight: a server without PollFlightInfo or RenewFlightEndpoint answers UNIMPLEMENTED', async () => {
    const pyarrow = await connect();
    const demo = await FlightClient.connect(env.demoGateway, { WebSocket });
    try {
      await rejectsWith(pyarrow.pollFlightInfo({ path: ['parts'] }), 12);
      const endpoint = { ticket: utf8('rows=1'), locations: [] };
      await rejectsWith(demo.renewFlightEndpoint(endpoint), 12, /the demo has no actions/);
    } finally {
      pyarrow.close();
      demo.close();
    }
  });

  test('flight: an aborted signal cancels pollFlightInfo, renewFlightEndpoint, getFlightInfo and doAction', async () => {
    const client = await FlightClient.connect(env.demoGateway, { WebSocket });
    try {
      const signal = AbortSignal.abort();
      await rejectsWith(client.pollFlightInfo({ cmd: 'polls=2' }, { signal }), 1, /cancelled by the client/);
      await rejectsWith(client.renewFlightEndpoint({ ticket: 't' }, { signal }), 1, /cancelled by the client/);
      await rejectsWith(client.getFlightInfo({ path: ['parts'] }, { signal }), 1, /cancelled by the client/);
      await rejectsWith(client.doAction('headers', undefined, { signal }), 1, /cancelled by the client/);
      // The connection goes on.
      assert.equal((await client.pollFlightInfo({ cmd: 'polls=2' })).progress, 0.5);
    } finally {
      client.close();
    }
  });

  test("flight: renewFlightEndpoint answers the server's renewed endpoint", async () => {
    const client = await connect();
    try {
      const [endpoint] = (await client.getFlightInfo({ path: ['parts'] })).endpoints;
      const expires = Date.UTC(2030, 0, 1);
      const renewed = await client.renewFlightEndpoint({ ...endpoint, expirationTimeMs: expires });
      assert.deepEqual(renewed.ticket, endpoint.ticket);
      assert.deepEqual(renewed.locations, [env.servers.main]);
      assert.equal(renewed.expirationTimeMs, expires + 3_600_000);
      assert.equal(text(renewed.appMetadata), 'renewed');
      const table = await client.doGet(renewed).readAll();
      assertSameRows(table, await reference(client, text(endpoint.ticket)));
      table.free();
    } finally {
      client.close();
    }
  });

  test('flight: bad arguments to pollFlightInfo throw, and to renewFlightEndpoint a TypeError', async () => {
    const client = await connect();
    try {
      // As getFlightInfo's.
      assert.throws(() => client.pollFlightInfo({ paths: ['x'] }), {
        message: 'a descriptor must be { path: string[] }, { cmd: Uint8Array | string } or { sql: string }',
      });
      assert.throws(() => client.pollFlightInfo({ path: ['x'] }, { signal: 'soon' }), {
        message: 'option signal must be an AbortSignal',
      });
      // A string is not a boolean: 'false' would have read as ordered.
      assert.throws(() => client.fetchAll({ endpoints: [] }, { ordered: 'false' }), {
        message: 'ordered must be a boolean, found "false"',
      });
      const renew = (...args) => () => client.renewFlightEndpoint(...args);
      const cases = [
        [renew('t'), 'expected a FlightEndpoint { ticket, locations?, expirationTimeMs?, appMetadata? }, found "t"'],
        [renew({ ticket: 5 }), 'endpoint.ticket must be a Uint8Array or a string, found 5'],
        [renew({ ticket: 't', locations: 'grpc://h:1' }), 'endpoint.locations must be an array of strings, found "grpc://h:1"'],
        [renew({ ticket: 't', locations: [1] }), 'endpoint.locations must be an array of strings, found [1]'],
        [renew({ ticket: 't', expirationTimeMs: 1.5 }),
          'endpoint.expirationTimeMs must be whole milliseconds since the Unix epoch, found 1.5'],
        [renew({ ticket: 't', expirationTimeMs: 2 ** 60 }),
          'endpoint.expirationTimeMs must be whole milliseconds since the Unix epoch, found 1152921504606847000'],
        [renew({ ticket: 't', appMetadata: 7 }), 'endpoint.appMetadata must be a Uint8Array or a string, found 7'],
        [renew({ ticket: 't' }, { signal: {} }), 'option signal must be an AbortSignal, found {}'],
      ];
      for (const [call, message] of cases) {
        await assert.rejects(call, { name: 'TypeError', message });
      }
    } finally {
      client.close();
    }
  });

  test('flight: a forbidden Origin is refused', async () => {
    await rejectsWith(FlightClient.connect(env.strictGateway, { WebSocket: ForeignWebSocket }), 14, /closed/);
  });
}
