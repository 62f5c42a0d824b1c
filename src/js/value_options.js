// The value options of `get`/`toArray` (flechette's names where it has one): checked once
// per options object (while its values stay) and interned, so that a column keeps one
// reader per option set, with the defaults as `undefined`, which takes the readers' plain
// path.

const DECIMALS = ['bigint', 'number', 'string'];
const KEYS = ['useDate', 'useBigInt', 'useDecimal', 'useMap'];
const interned = new Map();

const describe = (v) => (v === null ? 'null' : typeof v === 'string' ? `"${v}"` : typeof v);

/**
 * `options` checked: undefined for the defaults, else one frozen object per option set
 * `{ useDate, useBigInt, useDecimal, useMap }`. `extra` names other keys the caller reads
 * (toArray's `typed`). Throws a TypeError naming a bad option and what it takes.
 *
 * An object checked before answers from a cache, once its four values are found unchanged:
 * `get(i, options)` in a loop would otherwise check every key of it on every row.
 */
export function valueOptions(options, extra = NO_EXTRA) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object') throw new TypeError(`options must be an object, found ${describe(options)}`);
  const cache = extra.length === 0 ? checked : checkedWithExtra;
  const hit = cache.get(options);
  if (hit !== undefined && hit.useDate === options.useDate && hit.useBigInt === options.useBigInt
    && hit.useDecimal === options.useDecimal && hit.useMap === options.useMap) {
    return hit.set;
  }
  const set = check(options, extra);
  const { useDate, useBigInt, useDecimal, useMap } = options;
  cache.set(options, { useDate, useBigInt, useDecimal, useMap, set });
  return set;
}

const NO_EXTRA = [];
const checked = new WeakMap();
const checkedWithExtra = new WeakMap();

function check(options, extra) {
  for (const key in options) {
    if (!KEYS.includes(key) && !extra.includes(key)) {
      throw new TypeError(`unknown option "${key}": expected ${[...KEYS, ...extra].join(', ')}`);
    }
  }
  const { useDate = false, useBigInt = true, useDecimal = 'bigint', useMap = false } = options;
  for (const [key, value] of [['useDate', useDate], ['useBigInt', useBigInt], ['useMap', useMap]]) {
    if (typeof value !== 'boolean') throw new TypeError(`option ${key} must be a boolean, found ${describe(value)}`);
  }
  if (!DECIMALS.includes(useDecimal)) {
    throw new TypeError(`option useDecimal must be "bigint", "number" or "string", found ${describe(useDecimal)}`);
  }
  if (!useDate && useBigInt && useDecimal === 'bigint' && !useMap) return undefined;
  const key = `${useDate} ${useBigInt} ${useDecimal} ${useMap}`;
  let set = interned.get(key);
  if (set === undefined) interned.set(key, (set = Object.freeze({ useDate, useBigInt, useDecimal, useMap })));
  return set;
}

/**
 * toArray's `typed` option checked: whether to copy into a typed array where the column
 * allows one (the default), or always build a JS array (`typed: false`).
 */
export function wantsTyped(options) {
  const typed = options == null || options.typed === undefined ? true : options.typed;
  if (typeof typed !== 'boolean') throw new TypeError(`option typed must be a boolean, found ${describe(typed)}`);
  return typed;
}
