// Basic auth and Handshake from the JS client, through quiver-gateway, against a pyarrow
// Flight server whose Handshake takes a username and password and returns the bearer
// token every later call must carry (gateway/tests/flight_server.py --basic-auth).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { FlightClient, FlightError } from 'quiver-arrow';
import { buildGateway, pythonServer, startGateway } from './lib/flight-env.mjs';

const env = {};
before(async () => {
  const binary = buildGateway();
  const server = await pythonServer(['--basic-auth', 'ann:s3cret']);
  env.stoppers = [server.stop];
  const gateway = await startGateway(binary, ['--upstream', server.location]);
  env.stoppers.push(gateway.stop);
  // The service-credential mode, in front of the same server.
  const service = await startGateway(binary, ['--upstream', server.location, '--token', 'service']);
  env.stoppers.push(service.stop);
  Object.assign(env, { gateway: gateway.url, service: service.url });
}, { timeout: 300_000 });
after(() => Promise.all((env.stoppers ?? []).map((stop) => stop())));

const connect = (options, url = env.gateway) => FlightClient.connect(url, { WebSocket, ...options });

async function rejectsWith(promise, code, message) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof FlightError, `expected a FlightError, found ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.message, message);
    return true;
  });
}

test('connect with a username and password: later calls carry the server\'s token', async () => {
  const client = await connect({ username: 'ann', password: 's3cret' });
  try {
    const table = await client.doGet('data:0:10:1').readAll();
    assert.equal(table.numRows, 10);
    table.free();
    const [seen] = await client.doAction('headers');
    assert.deepEqual(JSON.parse(new TextDecoder().decode(seen)).authorization, ['Bearer token-for-ann']);
  } finally {
    client.close();
  }
});

test('a wrong password rejects connect with UNAUTHENTICATED and the server\'s message', async () => {
  await rejectsWith(connect({ username: 'ann', password: 'guess' }), 16,
    'UNAUTHENTICATED: wrong username or password...');
});

test('a connection without credentials is refused by the server', async () => {
  const client = await connect({});
  try {
    await assert.rejects(client.doGet('data:0:10:1').readAll(), (error) => {
      assert.equal(error.code, 16);
      assert.match(error.message, /^UNAUTHENTICATED: bad or missing bearer token/);
      return true;
    });
  } finally {
    client.close();
  }
});

test('fetchAll\'s extra sockets run the exchange too', async () => {
  const client = await connect({ username: 'ann', password: 's3cret' });
  try {
    const info = await client.getFlightInfo({ path: ['parts'] });
    // Two endpoints over two sockets: the second socket reads the second endpoint.
    const twice = { ...info, endpoints: [info.endpoints[0], info.endpoints[0]] };
    const table = await client.fetchAll(twice, { connections: 2 });
    assert.equal(table.numRows, 2 * 100_000);
    table.free();
  } finally {
    client.close();
  }
});

test('handshake sends a payload and resolves with the server\'s answers', async () => {
  const client = await connect({ username: 'ann', password: 's3cret' });
  try {
    const answers = await client.handshake(new TextEncoder().encode('hi'));
    assert.deepEqual(answers.map((a) => new TextDecoder().decode(a)), ['echo:hi']);
  } finally {
    client.close();
  }
});

test('a gateway holding the service credential refuses a username and password', async () => {
  await rejectsWith(connect({ username: 'ann', password: 's3cret' }, env.service), 9,
    'FAILED_PRECONDITION: this gateway holds the service credential (--token): connect with '
    + 'its token, not a username and password');
});

test('connect options: token or username and password, and both of the pair', async () => {
  await rejectsWith(connect({ token: 't', username: 'ann', password: 's3cret' }), 3,
    'INVALID_ARGUMENT: give option token or username and password, not both');
  await rejectsWith(connect({ username: 'ann' }), 3,
    'INVALID_ARGUMENT: options username and password go together');
  await rejectsWith(connect({ username: 'ann', password: 7 }), 3,
    'INVALID_ARGUMENT: option password must be a string');
});
