// Flight SQL on a FlightClient (`client.sql`), and its RenewFlightEndpoint. The gateway
// encodes their protobuf messages (gateway/src/sql/), so this module names commands and
// actions in JSON and the wasm module carries no protobuf code (docs/protocol.md, "Flight
// SQL").

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

// What the module's FlightErrors are (src/js/flight.js), which `instanceof FlightError`
// recognises; made here because the decode-only build, which has this file too, has no
// flight.js.
function flightError(code, codeName, message) {
  const error = new Error(`${codeName}: ${message}`);
  return Object.assign(error, { name: 'FlightError', code, codeName, details: new Uint8Array() });
}

/** A descriptor that the gateway encodes as the Flight SQL command `command`. */
function sqlDescriptor(command) {
  return { sql: JSON.stringify(command) };
}

/**
 * `promise`, or a rejection with a CANCELLED FlightError once `signal` aborts, for a call
 * left to finish on the server: what it answers after the abort goes to `late`, whose
 * errors are dropped (nobody waits for them).
 */
function abortable(signal, start, late) {
  if (!signal) return start();
  const aborted = () => flightError(1, 'CANCELLED', 'aborted by the signal');
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(aborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    start().then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) resolve(value);
        else {
          try {
            late(value);
          } catch {
            // An answer that cannot be used: nothing is left to undo.
          }
        }
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) reject(error);
      },
    );
  });
}

/** The JSON of the one result a gateway `sql.` action or put answers with. */
function onlyJson(results, what) {
  if (results.length !== 1) {
    throw flightError(13, 'INTERNAL', `expected one result of ${what}, found ${results.length}`);
  }
  return JSON.parse(fromUtf8.decode(results[0]));
}

function toBase64(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

function fromBase64(text) {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** An endpoint object as the protocol's JSON (control.rs `Endpoint`), to send back. */
function endpointToJson(e) {
  return {
    ticket: toBase64(e.ticket),
    locations: e.locations,
    ...(e.expirationTimeMs !== undefined && { expirationTimeMs: e.expirationTimeMs }),
    appMetadata: toBase64(e.appMetadata),
  };
}

/** A FlightInfo object as the protocol's JSON (control.rs `FlightInfo`), to send back. */
function infoToJson(info) {
  const descriptor = info.descriptor?.path
    ? { path: info.descriptor.path }
    : info.descriptor?.cmd && { cmd: toBase64(bytes(info.descriptor.cmd, 'info.descriptor.cmd')) };
  return {
    schema: toBase64(info.rawSchema),
    ...(descriptor && { descriptor }),
    endpoints: info.endpoints.map(endpointToJson),
    totalRecords: info.totalRecords,
    totalBytes: info.totalBytes,
    ordered: info.ordered,
    appMetadata: toBase64(info.appMetadata),
  };
}

/** A value shown in an error: JSON where it has one. */
function shown(value) {
  return typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value);
}

/** Bytes given as a Uint8Array or a string (its UTF-8), or a TypeError naming `what`. */
function bytes(value, what) {
  if (typeof value === 'string') return utf8.encode(value);
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`${what} must be a Uint8Array or a string, found ${shown(value)}`);
}

/** A whole endpoint as `renewFlightEndpoint` takes it, checked; a TypeError otherwise. */
function checkedEndpoint(endpoint) {
  if (typeof endpoint !== 'object' || endpoint === null || endpoint instanceof Uint8Array) {
    throw new TypeError('expected a FlightEndpoint { ticket, locations?, expirationTimeMs?, '
      + `appMetadata? }, found ${shown(endpoint)}`);
  }
  const { ticket, locations = [], expirationTimeMs, appMetadata = new Uint8Array() } = endpoint;
  if (!Array.isArray(locations) || !locations.every((l) => typeof l === 'string')) {
    throw new TypeError(`endpoint.locations must be an array of strings, found ${shown(locations)}`);
  }
  // Whole milliseconds a JS number holds exactly.
  if (expirationTimeMs !== undefined && !Number.isSafeInteger(expirationTimeMs)) {
    throw new TypeError('endpoint.expirationTimeMs must be whole milliseconds since the Unix '
      + `epoch, found ${shown(expirationTimeMs)}`);
  }
  return {
    ticket: bytes(ticket, 'endpoint.ticket'),
    locations,
    expirationTimeMs,
    appMetadata: bytes(appMetadata, 'endpoint.appMetadata'),
  };
}

/**
 * `client.renewFlightEndpoint(endpoint, { signal })`: the RenewFlightEndpoint action. Its
 * request and result are protobuf, which the gateway encodes (`sql.renewFlightEndpoint`,
 * docs/protocol.md), so the .wasm carries none. Resolves with the server's endpoint.
 */
export async function renewFlightEndpoint(client, endpoint, options = {}) {
  const { signal } = options ?? {};
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`option signal must be an AbortSignal, found ${shown(signal)}`);
  }
  const body = utf8.encode(JSON.stringify({ endpoint: endpointToJson(checkedEndpoint(endpoint)) }));
  const results = await client.doAction('sql.renewFlightEndpoint', body, { signal });
  const renewed = onlyJson(results, 'renewFlightEndpoint').endpoint;
  return {
    ticket: fromBase64(renewed.ticket),
    locations: renewed.locations,
    ...(renewed.expirationTimeMs !== undefined && { expirationTimeMs: renewed.expirationTimeMs }),
    appMetadata: fromBase64(renewed.appMetadata),
  };
}

/** A Table, an array of batches, or one batch, as `doPut` takes it. */
function putData(data) {
  // Anything else is refused by doPut, with what it expects.
  return Array.isArray(data) || data?.batches ? data : [data];
}

/** The calls that FlightSqlClient and PreparedStatement build on. */
class Calls {
  constructor(client, { StreamReader, batchFromColumns }) {
    this.client = client;
    this.StreamReader = StreamReader;
    this.batchFromColumns = batchFromColumns;
  }

  info(command, signal) {
    return this.client.getFlightInfo(sqlDescriptor(command), { signal });
  }

  fetch(info, { signal, ...options } = {}) {
    return this.client.fetchAll(info, { ...options, signal });
  }

  /**
   * A DoPut to `command`. The client's DoPut takes its schema from a batch, so one without
   * data (an update without parameters) sends a batch of no columns and no rows.
   */
  async put(command, data, signal) {
    // Aborting cancels the upload, and with it the update or the binding on the server.
    if (data !== undefined) return this.client.doPut(sqlDescriptor(command), putData(data), { signal });
    const empty = this.batchFromColumns({});
    try {
      return await this.client.doPut(sqlDescriptor(command), [empty], { signal });
    } finally {
      empty.free();
    }
  }

  async update(command, data, signal) {
    return onlyJson(await this.put(command, data, signal), command.type).recordCount;
  }

  /**
   * A gateway `sql.` action. Aborting `signal` cancels it, unless `late` is given: then the
   * call is left to finish on the server and `late` gets its answer (what it made, to undo).
   */
  async action(name, body, signal, late) {
    const call = (options) => this.client.doAction(`sql.${name}`, utf8.encode(JSON.stringify(body)), options);
    const results = late
      ? await abortable(signal, () => call(), (r) => late(onlyJson(r, name)))
      : await call({ signal });
    return name === 'closePreparedStatement' ? undefined : onlyJson(results, name);
  }

  schema(base64) {
    if (!base64) return undefined;
    const reader = new this.StreamReader();
    try {
      reader.push(fromBase64(base64));
      return reader.schema;
    } finally {
      reader.free();
    }
  }
}

/**
 * The Flight SQL calls of one FlightClient. Results that are tables are yours to `free()`.
 *
 * ```js
 * using table = await client.sql.execute('SELECT * FROM trips WHERE fare > 10');
 * ```
 */
export class FlightSqlClient {
  #calls;

  constructor(client, classes) {
    this.#calls = new Calls(client, classes);
  }

  /** The FlightInfo of a query; `fetchAll` or `doGet` read its endpoints. */
  query(sql, { signal } = {}) {
    return this.#calls.info({ type: 'statementQuery', query: sql }, signal);
  }

  /** Runs a query and reads all of its endpoints into one Table. */
  async execute(sql, options = {}) {
    return this.#calls.fetch(await this.query(sql, options), options);
  }

  /** Runs a query and yields its batches as they arrive, endpoint by endpoint. */
  async *stream(sql, { signal } = {}) {
    const info = await this.query(sql, { signal });
    for (const endpoint of info.endpoints) {
      const stream = this.#calls.client.doGet(endpoint, { signal });
      try {
        yield* stream;
      } finally {
        stream.free();
      }
    }
  }

  /** Runs an update (CommandStatementUpdate); resolves with the affected row count. */
  executeUpdate(sql, { signal } = {}) {
    return this.#calls.update({ type: 'statementUpdate', query: sql }, undefined, signal);
  }

  /** Prepares a statement; see `PreparedStatement`. */
  async prepare(sql, { signal } = {}) {
    const calls = this.#calls;
    const close = (handle) => calls.action('closePreparedStatement', { handle }).catch(() => {});
    // Aborted while the server prepared it: close what it prepared.
    const body = await calls.action('createPreparedStatement', { query: sql }, signal, (late) => close(late.handle));
    let schemas;
    try {
      schemas = [calls.schema(body.datasetSchema), calls.schema(body.parameterSchema)];
    } catch (error) {
      // A schema Quiver refuses: the statement would be nobody's to close.
      close(body.handle);
      throw error;
    }
    return new PreparedStatement(calls, body.handle, ...schemas);
  }

  /** The catalogs, as a Table with column `catalog_name`. */
  getCatalogs({ signal } = {}) {
    return this.#metadata({ type: 'getCatalogs' }, signal);
  }

  /** The schemas of `catalog` whose names match `pattern` (SQL LIKE: `%` and `_`). */
  getDbSchemas({ catalog, pattern, signal } = {}) {
    return this.#metadata({ type: 'getDbSchemas', catalog, dbSchemaFilterPattern: pattern }, signal);
  }

  /**
   * The tables matching the filters; with `includeSchema`, column `table_schema` holds
   * each table's IPC schema.
   */
  getTables({ catalog, dbSchemaPattern, tablePattern, tableTypes, includeSchema, signal } = {}) {
    return this.#metadata({
      type: 'getTables',
      catalog,
      dbSchemaFilterPattern: dbSchemaPattern,
      tableNameFilterPattern: tablePattern,
      tableTypes,
      includeSchema,
    }, signal);
  }

  /** The table types the server has (`TABLE`, `VIEW`, ...). */
  getTableTypes({ signal } = {}) {
    return this.#metadata({ type: 'getTableTypes' }, signal);
  }

  /** The server's SqlInfo entries `info` (ids of Flight SQL's SqlInfo enum; none: all). */
  getSqlInfo({ info, signal } = {}) {
    return this.#metadata({ type: 'getSqlInfo', info }, signal);
  }

  /** The primary key columns of `table`. */
  getPrimaryKeys({ catalog, dbSchema, table, signal } = {}) {
    return this.#metadata({ type: 'getPrimaryKeys', catalog, dbSchema, table }, signal);
  }

  /**
   * Asks the server to cancel the query of `info` (CancelFlightInfo); resolves with
   * `'cancelled'`, `'cancelling'`, `'notCancellable'` or `'unspecified'`.
   */
  async cancel(info, { signal } = {}) {
    return (await this.#calls.action('cancelFlightInfo', { info: infoToJson(info) }, signal)).status;
  }

  async #metadata(command, signal) {
    return this.#calls.fetch(await this.#calls.info(command, signal), { signal });
  }
}

/**
 * A prepared statement on the server. `datasetSchema` and `parameterSchema` are the
 * schemas the server announced (undefined if it sent none). Call `close()` when done.
 *
 * ```js
 * const stmt = await client.sql.prepare('SELECT * FROM trips WHERE city_id = $1');
 * await stmt.bind(parameters); // a batch with one row: the values of $1, $2, ...
 * using table = await stmt.execute();
 * await stmt.close();
 * ```
 */
export class PreparedStatement {
  #calls;
  #handle;
  // Settles once every bind begun so far has: close() must release the handle the last
  // bind answered with, not one a bind is about to replace.
  #binds = Promise.resolve();
  // The close in progress, which every close() call shares; null when there is none.
  #closing = null;
  // Set once close() succeeded: the server has forgotten the handle.
  #closed = false;

  constructor(calls, handle, datasetSchema, parameterSchema) {
    this.#calls = calls;
    this.#handle = handle;
    this.datasetSchema = datasetSchema;
    this.parameterSchema = parameterSchema;
  }

  /**
   * Binds parameters for `execute` (a DoPut of the batch, a Table or batches, which stay
   * yours). The server may answer with a new handle, which the later calls use.
   */
  async bind(parameters, { signal } = {}) {
    const command = { type: 'preparedStatementQuery', handle: this.#open() };
    const bound = this.#calls.put(command, parameters, signal).then((results) => {
      const handle = results.length > 0 ? onlyJson(results, command.type).handle : null;
      if (handle) this.#handle = handle;
    });
    this.#binds = Promise.all([this.#binds, bound.catch(() => {})]);
    await bound;
  }

  /** The FlightInfo of the statement with its bound parameters. */
  async query({ signal } = {}) {
    await this.#bound(signal);
    return this.#calls.info({ type: 'preparedStatementQuery', handle: this.#open() }, signal);
  }

  /** Runs the statement and reads all of its endpoints into one Table. */
  async execute(options = {}) {
    return this.#calls.fetch(await this.query(options), options);
  }

  /**
   * Runs the statement as an update, with `parameters` (a batch, a Table or batches; they
   * stay yours) if given; resolves with the affected row count the server reports.
   */
  async executeUpdate(parameters, { signal } = {}) {
    await this.#bound(signal);
    const command = { type: 'preparedStatementUpdate', handle: this.#open() };
    return this.#calls.update(command, parameters, signal);
  }

  /**
   * Releases the statement on the server, once the binds in flight have settled. From
   * the call on, the other methods refuse; once the server has released it, a second
   * close does nothing. Calls made while one is in progress share it (and its signal);
   * a close that failed can be retried.
   */
  async close({ signal } = {}) {
    if (this.#closed) return Promise.resolve();
    this.#closing ??= this.#release(signal).finally(() => {
      this.#closing = null;
    });
    return this.#closing;
  }

  async #release(signal) {
    // A bind that never settles must not keep an aborted close waiting; one aborted
    // already is refused by the call below, as every call is.
    if (!signal?.aborted) await abortable(signal, () => this.#binds, () => {});
    await this.#calls.action('closePreparedStatement', { handle: this.#handle }, signal);
    this.#closed = true;
  }

  /**
   * Waits for the binds begun before a call, which may answer the handle it must use (a
   * server without state carries the parameters in it); refuses a closed statement first.
   */
  async #bound(signal) {
    this.#open();
    await abortable(signal, () => this.#binds, () => {});
  }

  /** The handle, while the statement is open. */
  #open() {
    if (this.#closed || this.#closing) {
      throw new Error('this prepared statement was closed: prepare it again');
    }
    return this.#handle;
  }
}
