// The columns each batch or table has handed out, which its free() and memory growth
// reach: a column's `values` is a data property that nothing checks on read (see
// column.js), so what a getter would check is done to the columns instead.
//
// - Freeing: an owner's free() (and [Symbol.dispose]) first retires every column it
//   handed out, whose `values` then throws on any use. An owner the collector frees has
//   no column left in use, as each column keeps its owner reachable (owner.js).
// - Growth: growing a fixed-length memory (Node 20, WebKit) detaches every view. Rust's
//   allocator calls memoryGrew() when memory grew (src/wasm/memory.rs), and each column
//   handed out by a live owner makes its `values` again before that call into wasm
//   returns. Owners are found through a WeakRef each, which keeps none alive: one per
//   batch or table that handed out a column, not one per column (a WeakRef per column
//   cost 0.7 µs a 100-row batch in Node). Over a resizable buffer views follow growth,
//   and no owner is registered.

/** The key of `column[RENEW]()`: makes its `values` again if memory grew away from it. */
export const RENEW = Symbol('renew');
/** The key of `column[RETIRE]()`: makes its `values` throw, as its owner is being freed. */
export const RETIRE = Symbol('retire');

// Per owner: `columns`, what it handed out by key (a column, or an array of them), and
// `ref`, its entry in `watched` if it has one.
const handed = new WeakMap();
// The owners whose columns growth must reach.
const watched = new Set();
// When `watched` holds this many, the entries of collected owners are dropped.
let sweepAt = 64;
let viewsFollowGrowth = false;

/** Says that views follow memory growth (a resizable buffer): no owner is watched. */
export function followGrowth() {
  viewsFollowGrowth = true;
}

/** What `owner` handed out, by key: a Map to add to. */
export function handedOut(owner) {
  let record = handed.get(owner);
  if (record === undefined) {
    record = { columns: new Map(), ref: viewsFollowGrowth ? undefined : watch(owner) };
    handed.set(owner, record);
  }
  return record.columns;
}

/**
 * Makes `values` of columns just made (one, or an array) again if memory grew before
 * they were recorded: the call that made them still allocated after making them.
 */
export function renew(value) {
  rethrow(each(value, RENEW));
}

/** Retires what `owner` handed out, as it is about to be freed; throws what failed. */
export function retire(owner) {
  const record = handed.get(owner);
  if (record === undefined) return;
  handed.delete(owner);
  if (record.ref !== undefined) watched.delete(record.ref);
  let failure;
  for (const value of record.columns.values()) failure = each(value, RETIRE, failure);
  rethrow(failure);
}

/**
 * Calls `part[key]()` on each of `parts`, going on past any that throws, so that one
 * column that cannot be renewed or retired (a user froze it, say) leaves none of the
 * others stale. Returns `failure`, or else the first failure, as `{ error }`.
 */
export function callEach(parts, key, failure) {
  for (const part of parts) {
    // Not `failure ??= attempt(...)`, which would skip the parts after a failure.
    const failed = attempt(() => part[key]());
    failure ??= failed;
  }
  return failure;
}

/** Runs `step`; returns what it threw, as `{ error }`, or undefined. */
export function attempt(step) {
  try {
    step();
    return undefined;
  } catch (error) {
    return { error };
  }
}

/** Throws the error of a failure that attempt or callEach returned, if there is one. */
export function rethrow(failure) {
  if (failure !== undefined) throw failure.error;
}

/**
 * Called by Rust's allocator once memory grew: renews what every live owner handed out.
 * It must not throw, as that would unwind the allocator mid-call: what fails (a column
 * whose `values` a user redefined, say) is thrown later, on its own, and the columns
 * beside it are renewed all the same.
 */
export function memoryGrew() {
  for (const ref of watched) {
    const owner = ref.deref();
    const record = owner === undefined ? undefined : handed.get(owner);
    if (record === undefined) {
      watched.delete(ref);
      continue;
    }
    for (const value of record.columns.values()) {
      const failure = each(value, RENEW);
      if (failure !== undefined) {
        queueMicrotask(() => {
          throw failure.error;
        });
      }
    }
  }
}

function watch(owner) {
  if (watched.size >= sweepAt) {
    for (const ref of watched) if (ref.deref() === undefined) watched.delete(ref);
    sweepAt = Math.max(64, 2 * watched.size);
  }
  const ref = new WeakRef(owner);
  watched.add(ref);
  return ref;
}

/** callEach on a column, or on an array of them. */
function each(value, key, failure) {
  return callEach(Array.isArray(value) ? value : [value], key, failure);
}
