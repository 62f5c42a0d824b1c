// What the Flight client's tests against hostile gateways share between Node and the
// browser engines: the length of a stream's end marker, and waiting on the client.

/** An IPC stream's end-of-stream marker: the continuation token and a zero length. */
export const EOS_LENGTH = 8;

/** Checks that `promise` rejects with a FlightError of `code` whose message matches. */
export async function rejects(promise, code, message) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  if (error === undefined) throw new Error(`expected a rejection with code ${code}, found none`);
  if (error.code !== code) throw new Error(`expected code ${code}, found code ${error.code}: ${error.message}`);
  if (!message.test(error.message)) throw new Error(`expected a message matching ${message}, found: ${error.message}`);
}

/** `promise`, or a rejection after `ms`: a hang fails the test instead of the run. */
export function within(promise, ms = 5000) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
