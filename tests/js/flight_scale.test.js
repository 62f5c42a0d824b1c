// Past one machine: a FlightInfo whose endpoints sit on two pyarrow Flight servers, each
// endpoint with two locations of which the first is down, read by fetchAll through a
// quiver-gateway whose --allow-location list the test chooses. Node only: listeners in
// this process count the connections the gateway makes to the locations that are down
// and to one it must never dial.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { FlightClient, tableFromIPC } from 'quiver-arrow';
import {
  buildGateway, countingListener, deadLocation, pythonServer, startGateway,
} from './lib/flight-env.mjs';
import { rejects, within } from './lib/flight-checks.js';

// Each stream takes (BATCHES - 1) * PAUSE_MS = 800 ms on its server: two read one after
// the other cannot overlap.
const PAUSE_MS = 200;
const ROWS = 1000;
const BATCHES = 5;
const paced = (tag, part) => `paced:${tag}:${PAUSE_MS}:${part}:${ROWS}:${BATCHES}`;
// A read that dialled a down location until the gateway's 10 s connect timeout would
// take longer than this.
const FAST_MS = 5000;
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const env = {};
before(async () => {
  const binary = buildGateway();
  env.stoppers = [];
  const [a, b, downA, downB, forbidden] = await Promise.all([
    pythonServer([]), pythonServer([]), countingListener(), countingListener(), countingListener(),
  ]);
  env.stoppers.push(a.stop, b.stop, downA.stop, downB.stop, forbidden.stop);
  const dead = await deadLocation();
  // `forbidden` listens but is not on the list.
  const allowed = [b.location, downA.location, downB.location, dead]
    .flatMap((location) => ['--allow-location', location]);
  const gateway = await startGateway(binary, ['--upstream', a.location, ...allowed]);
  env.stoppers.push(gateway.stop);
  Object.assign(env, { gateway: gateway.url, a, b, downA, downB, forbidden, dead });
}, { timeout: 300_000 });
after(() => Promise.all((env.stoppers ?? []).map((stop) => stop())));

const connect = () => FlightClient.connect(env.gateway, { WebSocket });

/** The FlightInfo the upstream answers for `endpoints` ({ ticket, locations }). */
const infoOf = (client, endpoints) =>
  client.getFlightInfo({ path: ['endpoints', JSON.stringify(endpoints)] });

/** What pyarrow writes for `ticket`, through DoAction "dump", as rows. */
async function reference(client, ticket) {
  const [body] = await client.doAction('dump', new TextEncoder().encode(ticket));
  const table = tableFromIPC(body);
  try {
    return table.toArray();
  } finally {
    table.free();
  }
}

/** When `server` started and ended streaming `ticket`, in seconds of CLOCK_MONOTONIC. */
async function streamed(server, ticket) {
  const at = async (event) => {
    const line = await server.line(new RegExp(`^PACED ${event} ${ticket} `), 5000);
    assert.ok(line, `${server.location} printed PACED ${event} ${ticket}`);
    return Number(line.split(' ').at(-1));
  };
  return { start: await at('START'), end: await at('END') };
}

/**
 * fetchAll with `options` of two paced endpoints, one on each server behind a down
 * location; checks the data and returns how long the servers' streams overlapped (s).
 */
async function readBothServers(tag, options) {
  const client = await connect();
  try {
    const endpoints = [
      { ticket: paced(tag, 0), locations: [env.downA.location, env.a.location] },
      { ticket: paced(tag, 1), locations: [env.downB.location, env.b.location] },
    ];
    const info = await infoOf(client, endpoints);
    assert.deepEqual(info.endpoints.map((e) => e.locations), endpoints.map((e) => e.locations));
    const table = await within(client.fetchAll(info, options), FAST_MS);
    try {
      // Every batch of both endpoints, in endpoint order.
      assert.deepEqual(table.batches.map((b) => b.numRows), Array(2 * BATCHES).fill(ROWS));
      const expected = [...await reference(client, paced(tag, 0)), ...await reference(client, paced(tag, 1))];
      assert.deepEqual(table.toArray(), expected);
    } finally {
      table.free();
    }
    // Each endpoint was read at its second location: its own server.
    const [a, b] = await Promise.all([streamed(env.a, paced(tag, 0)), streamed(env.b, paced(tag, 1))]);
    return Math.min(a.end, b.end) - Math.max(a.start, b.start);
  } finally {
    client.close();
  }
}

test('fetchAll reads endpoints on two servers at once, each past its down first location', async () => {
  const overlap = await readBothServers('parallel', {});
  // The streams overlap by about their 800 ms when read at once.
  assert.ok(overlap > 0, `the servers streamed ${-overlap} s apart, one after the other`);
  // Each down location was dialled, and the next location read.
  assert.ok(env.downA.dials() > 0, `${env.downA.location} was never dialled`);
  assert.ok(env.downB.dials() > 0, `${env.downB.location} was never dialled`);
  // The measure tells the two apart: read one endpoint at a time, they do not overlap.
  const sequential = await readBothServers('sequential', { concurrency: 1 });
  assert.ok(sequential < 0, `read one at a time, the streams overlapped by ${sequential} s`);
});

test('a location outside --allow-location is never dialled: passed over, or named in the error', async () => {
  const client = await connect();
  const forbidden = env.forbidden.location;
  try {
    // Refused by the gateway, then the next location is read.
    const passed = await infoOf(client, [{ ticket: 'data:1:10:2', locations: [forbidden, env.b.location] }]);
    const table = await within(client.fetchAll(passed), FAST_MS);
    assert.deepEqual(table.toArray(), await reference(client, 'data:1:10:2'));
    table.free();
    // Nothing to read: the error names each location and why it failed, promptly.
    const none = await infoOf(client, [{ ticket: 'data:0:10:1', locations: [env.dead, forbidden] }]);
    const [dead, refused] = [literal(env.dead), literal(forbidden)];
    await within(rejects(client.fetchAll(none), 7, new RegExp(
      `^PERMISSION_DENIED: 2 of the endpoint's 2 locations failed: ${dead}: UNAVAILABLE .+; `
      + `${refused}: PERMISSION_DENIED location ${refused} is not in the gateway's allowed locations$`,
    )), FAST_MS);
    assert.equal(env.forbidden.dials(), 0, `the gateway dialled ${forbidden}`);
  } finally {
    client.close();
  }
});
