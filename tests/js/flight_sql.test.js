// Flight SQL (`client.sql`) against a real Flight SQL server: datafusion-flight-sql-server
// (tests/fixtures/flight-sql-server), through a real quiver-gateway. Results are compared
// with the same SQL run natively by the fixture, without Flight.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import * as quiver from 'quiver-arrow';
import { startFlightSqlEnv } from './lib/flight-env.mjs';

const env = {};
let client;
before(async () => {
  Object.assign(env, await startFlightSqlEnv());
  client = await quiver.FlightClient.connect(env.gateway, { WebSocket });
}, { timeout: 1_200_000 });
after(async () => {
  client?.close();
  await env.stop?.();
});

// Rows as the fixture's JSON writer has them: numbers, and no key for a null.
function plain(rows) {
  return rows.map((row) => Object.fromEntries(Object.entries(row)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

async function rowsOf(tablePromise) {
  const table = await tablePromise;
  try {
    return plain(table.toArray());
  } finally {
    table.free();
  }
}

function assertNative(rows, sql) {
  const native = env.native(sql);
  assert.equal(native.error, undefined, native.error);
  assert.ok(native.rows.length > 0, `${sql} returns rows natively`);
  assert.deepEqual(rows, native.rows);
}

const fieldNames = (schema) => schema.fields.map((f) => f.name);

test('execute() returns what the server computes natively', async () => {
  for (const sql of [
    'SELECT id, name, population FROM cities ORDER BY id',
    'SELECT city_id, COUNT(*) AS trips, SUM(fare) AS total, BOOL_OR(shared) AS any_shared '
      + 'FROM trips GROUP BY city_id ORDER BY city_id',
  ]) {
    assertNative(await rowsOf(client.sql.execute(sql)), sql);
  }
});

test('query() gives the FlightInfo, whose endpoints fetchAll reads', async () => {
  const sql = 'SELECT id, fare FROM trips WHERE id <= 5 ORDER BY id';
  const info = await client.sql.query(sql);
  assert.deepEqual(fieldNames(info.schema), ['id', 'fare']);
  assert.equal(info.endpoints.length, 1);
  assertNative(await rowsOf(client.fetchAll(info)), sql);
});

test('stream() yields the batches as they arrive', async () => {
  let rows = 0;
  let batches = 0;
  for await (const batch of client.sql.stream('SELECT * FROM trips')) {
    rows += batch.numRows;
    batches += 1;
    batch.free();
  }
  assert.equal(rows, env.native('SELECT COUNT(*) AS n FROM trips').rows[0].n);
  assert.ok(batches >= 1);
});

test('aborting stream() mid-way cancels it, and the connection goes on', async () => {
  const controller = new AbortController();
  let rows = 0;
  await assert.rejects(
    (async () => {
      for await (const batch of client.sql.stream(
        'SELECT value FROM generate_series(1, 1000000000)', { signal: controller.signal },
      )) {
        rows += batch.numRows;
        batch.free();
        if (rows >= 20_000) controller.abort();
      }
    })(),
    (error) => {
      assert.ok(error instanceof quiver.FlightError);
      assert.equal(error.codeName, 'CANCELLED');
      assert.equal(error.message, 'CANCELLED: cancelled by the client');
      return true;
    },
  );
  assert.ok(rows >= 20_000 && rows < 1_000_000, `read ${rows} rows before the abort took effect`);
  assertNative(await rowsOf(client.sql.execute('SELECT COUNT(*) AS n FROM cities')), 'SELECT COUNT(*) AS n FROM cities');
});

test('a signal aborted before a call rejects it with CANCELLED', async () => {
  const signal = AbortSignal.abort();
  // Calls the client cancels, and prepare, which is left to finish on the server so that
  // what it prepared can be closed.
  const cancelled = 'CANCELLED: cancelled by the client';
  const stmt = await client.sql.prepare('SELECT id FROM cities WHERE population > $1');
  const parameters = quiver.batchFromColumns({ $1: BigInt64Array.of(1n) });
  for (const [call, message] of [
    [() => client.sql.query('SELECT 1', { signal }), cancelled],
    [() => client.sql.getCatalogs({ signal }), cancelled],
    [() => client.sql.executeUpdate('INSERT INTO nowhere VALUES (1)', { signal }), cancelled],
    [() => stmt.bind(parameters, { signal }), cancelled],
    [() => stmt.close({ signal }), cancelled],
    [() => client.sql.prepare('SELECT 1', { signal }), 'CANCELLED: aborted by the signal'],
  ]) {
    await assert.rejects(call(), { name: 'FlightError', code: 1, message });
  }
  parameters.free();
  await stmt.close();
});

test('a SQL error reaches JS as a FlightError with the server\'s code and message', async () => {
  const sql = 'SELECT no_such_column FROM cities';
  const native = env.native(sql);
  assert.match(native.error, /no_such_column/);
  await assert.rejects(client.sql.execute(sql), (error) => {
    assert.ok(error instanceof quiver.FlightError);
    assert.equal(error.code, 13);
    assert.equal(error.message, `INTERNAL: ${native.error}`);
    return true;
  });
});

test('metadata: catalogs, schemas, tables and table types', async () => {
  assert.deepEqual(await rowsOf(client.sql.getCatalogs()), [{ catalog_name: 'datafusion' }]);
  assert.deepEqual(
    await rowsOf(client.sql.getDbSchemas({ catalog: 'datafusion', pattern: 'stag%' })),
    [{ catalog_name: 'datafusion', db_schema_name: 'staging' }],
  );
  const tables = await client.sql.getTables({ catalog: 'datafusion', dbSchemaPattern: 'public', includeSchema: true });
  try {
    const rows = tables.toArray();
    assert.deepEqual(rows.map((r) => r.table_name).sort(), ['cities', 'trips']);
    const cities = rows.find((r) => r.table_name === 'cities');
    assert.equal(cities.table_type, 'Base');
    // table_schema holds each table's IPC schema.
    const reader = new quiver.StreamReader();
    reader.push(cities.table_schema);
    assert.deepEqual(fieldNames(reader.schema), ['id', 'name', 'population']);
    reader.free();
  } finally {
    tables.free();
  }
  assert.deepEqual(
    (await rowsOf(client.sql.getTableTypes())).map((r) => r.table_type),
    ['Base', 'View', 'Temporary'],
  );
});

test('GetSqlInfo and GetPrimaryKeys reach the server, which does not implement them', async () => {
  // The server's messages name the commands it decoded: the gateway encoded the right ones.
  await assert.rejects(client.sql.getSqlInfo({ info: [0] }), {
    name: 'FlightError', code: 12, message: 'UNIMPLEMENTED: Implement CommandGetSqlInfo',
  });
  await assert.rejects(client.sql.getPrimaryKeys({ table: 'cities' }), {
    name: 'FlightError', code: 12, message: 'UNIMPLEMENTED: Implement get_flight_info_primary_keys',
  });
});

test('prepared statements: schemas, parameters bound through DoPut, execute, close', async () => {
  const sql = 'SELECT id, name FROM cities WHERE population > $1 ORDER BY id';
  const stmt = await client.sql.prepare(sql);
  assert.deepEqual(fieldNames(stmt.datasetSchema), ['id', 'name']);
  assert.deepEqual(stmt.parameterSchema.fields.map((f) => [f.name, f.type]), [['$1', 'Int64']]);
  for (const threshold of [600_000n, 1_000_000n]) {
    const parameters = quiver.batchFromColumns({ $1: BigInt64Array.of(threshold) });
    try {
      await stmt.bind(parameters);
    } finally {
      parameters.free();
    }
    assertNative(await rowsOf(stmt.execute()), sql.replace('$1', String(threshold)));
  }
  // A bind not awaited: execute waits for it, and runs with its parameters.
  const later = quiver.batchFromColumns({ $1: BigInt64Array.of(500_000n) });
  const binding = stmt.bind(later);
  assertNative(await rowsOf(stmt.execute()), sql.replace('$1', '500000'));
  await binding;
  later.free();
  // A bind still in flight: close waits for it, so it releases the handle it answers
  // with; the calls made once close has begun, and concurrent closes, share its fate.
  const parameters = quiver.batchFromColumns({ $1: BigInt64Array.of(1n) });
  const bound = stmt.bind(parameters);
  const closing = stmt.close();
  const closed = { message: 'this prepared statement was closed: prepare it again' };
  await assert.rejects(stmt.execute(), closed);
  await assert.rejects(stmt.bind(parameters), closed);
  const order = [];
  await Promise.all([
    bound.then(() => order.push('bind')),
    closing.then(() => order.push('close')),
    stmt.close().then(() => order.push('second close')),
  ]);
  assert.deepEqual(order, ['bind', 'close', 'second close']);
  // Closed here too: a second close does nothing, and the other calls say why they fail.
  await stmt.close();
  await assert.rejects(stmt.execute(), closed);
  await assert.rejects(stmt.query(), closed);
  await assert.rejects(stmt.executeUpdate(), closed);
  await assert.rejects(stmt.bind(parameters), closed);
  parameters.free();
});

test('an update: INSERT through a query, then the new rows are read back', async () => {
  const inserted = await rowsOf(client.sql.execute("INSERT INTO staging.imports VALUES ('a', 3), ('b', 4)"));
  assert.deepEqual(inserted, [{ count: 2 }]);
  const sql = 'SELECT batch, rows FROM staging.imports ORDER BY batch';
  assert.deepEqual(await rowsOf(client.sql.execute(sql)), [{ batch: 'a', rows: 3 }, { batch: 'b', rows: 4 }]);
});

test('executeUpdate and a prepared executeUpdate get the server\'s answers', async () => {
  // datafusion-flight-sql-server implements neither CommandStatementUpdate nor prepared
  // updates: it refuses the first, and answers the second with -1 without running it.
  await assert.rejects(client.sql.executeUpdate("INSERT INTO staging.imports VALUES ('c', 5)"), {
    name: 'FlightError', code: 12, message: 'UNIMPLEMENTED: Implement do_put_statement_update',
  });
  const stmt = await client.sql.prepare("INSERT INTO staging.imports VALUES ('d', 6)");
  assert.equal(await stmt.executeUpdate(), -1);
  // Parameters that are not batches are refused with what is expected.
  await assert.rejects(stmt.executeUpdate(null), {
    message: 'doPut expects a Quiver Table or an array of Quiver RecordBatches (fromArrowJS converts apache-arrow ones)',
  });
  await stmt.close();
});

test('cancel(info) sends CancelFlightInfo, which the server does not offer', async () => {
  const info = await client.sql.query('SELECT * FROM trips');
  const refused = {
    name: 'FlightError',
    code: 3,
    message: 'INVALID_ARGUMENT: do_action: The defined request is invalid: "CancelFlightInfo"',
  };
  await assert.rejects(client.sql.cancel(info), refused);
  // A FlightInfo built by hand may name its command as a string.
  await assert.rejects(client.sql.cancel({ ...info, descriptor: { cmd: 'SELECT 1' } }), refused);
});

test('a malformed sql descriptor is refused by the gateway with what is wrong', async () => {
  await assert.rejects(client.getFlightInfo({ sql: '{"type":"dropEverything"}' }), (error) => {
    assert.equal(error.codeName, 'INVALID_ARGUMENT');
    assert.match(error.message, /^INVALID_ARGUMENT: descriptor.sql is not valid: unknown variant `dropEverything`/);
    return true;
  });
});
