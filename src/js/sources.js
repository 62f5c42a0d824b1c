// The byte sources the platform hands over (a fetch Response, a ReadableStream, a Blob or
// File, any async iterable) as one sequence of segments, for a StreamReader to push as
// they come: never joined, never copied here.
//
// ReadableStreams (a Response's body, a Blob's stream()) are read through getReader(),
// which every engine has: Safari cannot iterate them with for await.

const KINDS = 'a Response, a ReadableStream, an AsyncIterable of Uint8Array or a Blob';

/**
 * What reads `source`, as `{ read(), cancel(reason) }`: `read()` resolves like a stream
 * reader's `read()`, and `cancel` (idempotent) stops the source and never rejects. Throws
 * at once, naming `fn`, for what is not a source and for a Response that is not OK, whose
 * body it cancels so the connection is not left open.
 */
export function openSource(source, fn) {
  if (isResponse(source)) {
    if (!source.ok) {
      ignoreRejection(source.body?.cancel());
      const status = `HTTP ${source.status}${source.statusText ? ` ${source.statusText}` : ''}`;
      throw new Error(`${fn} expects an OK Response, found ${status} from ${source.url || 'a Response with no URL'}`);
    }
    if (source.bodyUsed) throw new Error(`${fn} expects a Response whose body is unread, found one already read`);
    // A Response with no body (status 204, say) is an empty stream: finish() says so.
    return source.body === null ? chunkSource(async () => ({ done: true }), () => {}) : open(source.body, fn);
  }
  if (isBlob(source)) return fromStream(source.stream());
  return open(source, fn);
}

function open(source, fn) {
  if (typeof source?.getReader === 'function') {
    if (source.locked) throw new Error(`${fn} expects an unlocked ReadableStream, found one another reader holds`);
    return fromStream(source);
  }
  if (typeof source?.[Symbol.asyncIterator] === 'function') return fromIterator(source);
  throw new Error(`${fn} expects ${KINDS}, found ${describe(source)}`);
}

function isResponse(value) {
  return typeof value?.ok === 'boolean' && typeof value.status === 'number' && 'body' in value;
}

function isBlob(value) {
  return typeof value?.stream === 'function' && typeof value.slice === 'function' && typeof value.size === 'number';
}

function fromStream(stream) {
  const reader = stream.getReader();
  return chunkSource(() => reader.read(), (reason) => reader.cancel(reason));
}

function fromIterator(source) {
  const iterator = source[Symbol.asyncIterator]();
  return chunkSource(() => iterator.next(), () => {
    // A Node stream's iterator destroys it in a `finally` that return() skips when no
    // next() has run, and runs only after a pending one.
    if (isNodeStream(source)) source.destroy();
    return iterator.return?.();
  });
}

function isNodeStream(value) {
  return typeof value.destroy === 'function' && typeof value.destroyed === 'boolean';
}

function chunkSource(read, stop) {
  let stopped;
  const cancel = (reason) => {
    // A source that already failed rejects its cancel with that failure, told already.
    stopped ??= Promise.resolve().then(() => stop(reason)).catch(() => {});
    return stopped;
  };
  return { read, cancel };
}

function ignoreRejection(promise) {
  promise?.catch(() => {});
}

/**
 * Yields the segments of `source` (from openSource) as they arrive, each a Uint8Array.
 * Leaving early (break, or an error in the loop) cancels the source. `signal` cancels it
 * at once, and the loop then rejects with `signal.reason`, also while a read is pending.
 */
export async function* readSegments(source, signal, fn) {
  const abort = () => source.cancel(reasonOf(signal));
  signal?.addEventListener('abort', abort);
  let ended = false;
  try {
    for (;;) {
      throwIfAborted(signal);
      const { done, value } = await untilAborted(source.read(), signal);
      throwIfAborted(signal);
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        throw new Error(`${fn} expects chunks of Uint8Array, found ${describe(value)}`);
      }
      yield value;
    }
    ended = true;
  } finally {
    signal?.removeEventListener('abort', abort);
    if (!ended) {
      const cancelled = source.cancel(signal?.aborted ? reasonOf(signal) : undefined);
      // An iterator's return() waits for a pending next(), which an abort may have cut
      // short and which may never settle: after an abort, cancel without waiting.
      if (!signal?.aborted) await cancelled;
    }
  }
}

/** `promise` (or a value), or a rejection with the signal's reason once it aborts. */
function untilAborted(promise, signal) {
  if (signal === undefined) return promise;
  return new Promise((resolve, reject) => {
    const abort = () => reject(reasonOf(signal));
    signal.addEventListener('abort', abort, { once: true });
    Promise.resolve(promise).then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

// Signals from polyfills may lack throwIfAborted() and a reason.
function throwIfAborted(signal) {
  if (signal?.aborted) throw reasonOf(signal);
}

/** Why `signal` aborted: its reason, or an AbortError where a polyfill gives none. */
export function reasonOf(signal) {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** `options.signal` checked, and the other options, for the reader. */
export function splitOptions(options, fn) {
  if (options === null || typeof options !== 'object' || !('signal' in options)) {
    return { signal: undefined, limits: options };
  }
  const { signal, ...limits } = options;
  if (signal !== undefined && (typeof signal?.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    throw new Error(`${fn} option signal must be an AbortSignal, found ${describe(signal)}`);
  }
  return { signal, limits };
}

/** What `value` is, for an error message: its class, or a primitive as it is. */
export function describe(value) {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? 'a string' : String(value);
  return value.constructor?.name ?? 'an object';
}
