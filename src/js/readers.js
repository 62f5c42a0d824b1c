// Row values read from a column's typed-array views, one reader per type. A reader works
// on the views as they are when it is made: use it at once, before any other call into
// wasm. `start` is row 0's index in the column's buffers (its offset, plus the parent's
// for a struct or sparse union child).
//
// toArray()/get(i) follow apache-arrow JS `Vector.get(i)`, with these choices:
//   null slots -> null (for every type; Arrow JS's toArray() on numbers ignores nulls)
//   int64/uint64, time64, duration -> bigint; other ints, floats, time32 -> number
//   date, timestamp -> number of epoch milliseconds (microseconds and nanoseconds give a
//     fractional millisecond, as Arrow JS computes it)
//   decimal -> bigint of the unscaled value (123.45 as decimal(5, 2) -> 12345n)
//   interval -> YEAR_MONTH: number of months; DAY_TIME: { days, milliseconds };
//     MONTH_DAY_NANO: { months, days, nanoseconds } with nanoseconds a bigint
//   binary, large binary, binary view, fixed-size binary -> a Uint8Array copy
//   utf8, large utf8, utf8 view -> string
//   list, large list, list view, large list view, fixed-size list -> array
//   struct -> plain object (of duplicate field names, the last wins, as in Arrow JS
//     toJSON())
//   map -> array of [key, value] pairs (lossless; `new Map(pairs)` if keys are unique)
//   union -> the value of the selected child; dictionary -> the decoded value
//   run-end encoded -> the value of the run that holds the row (expanded)
// Value options (value_options.js; the README's "Value options" table) change four of
// these, in nested values too: useDate (date, timestamp -> Date), useBigInt: false
// (64-bit ints, time64, duration -> number, a RangeError beyond 2^53 - 1), useDecimal
// ("number" or an exact "string") and useMap (map -> Map). `options` below is what
// valueOptions returns: undefined for the defaults.

/**
 * The key of a column's `values` as memory is now, checked: what readers read, where
 * the `values` property of a column never handed out may be stale (see column.js).
 */
export const VALUES_NOW = Symbol('valuesNow');

const utf8 = new TextDecoder();
// Strings up to this many bytes are tried as ASCII in JS first (see `text`).
const SHORT_STRING = 32;
// The char codes of the string being read, reused from one string to the next.
const codes = [];

/**
 * Bytes `start` to `end` of `bytes` as a string. A short ASCII string is read in JS: a
 * TextDecoder call costs more than the loop (about 2.5× for 16 bytes in Chromium), and
 * refuses views of a resizable buffer, so that it must be given a copy there.
 */
function text(bytes, start, end) {
  if (end - start <= SHORT_STRING) {
    codes.length = end - start;
    let bits = 0;
    for (let k = start; k < end; k++) {
      const byte = bytes[k];
      bits |= byte;
      codes[k - start] = byte;
    }
    if (bits < 0x80) return String.fromCharCode.apply(null, codes);
  }
  return utf8.decode(bytes.buffer.resizable ? bytes.slice(start, end) : bytes.subarray(start, end));
}

/** Bit `i` of a bitmap. */
const bit = (bytes, i) => (bytes[i >> 3] >> (i & 7)) & 1;

/** As Arrow JS's divideBigInts: a whole part plus a fractional part. */
const divide = (value, by) => Number(value / by) + Number(value % by) / Number(by);

const TIMESTAMP_MS = {
  SECOND: (v) => 1000 * Number(v),
  MILLISECOND: (v) => Number(v),
  MICROSECOND: (v) => divide(v, 1000n),
  NANOSECOND: (v) => divide(v, 1000000n),
};

function float16(bits) {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** `(i) => column.isValid(i)`. */
export function validReader(column, start) {
  const { id, mode } = column.type;
  if (id === 'Null') return () => false;
  if (id === 'Union') {
    const children = column.children.map((c) => c.validReader());
    const child = unionChild(column);
    const offsets = mode === 'Dense' ? column.offsets : undefined;
    return (i) => children[child(i)](offsets ? offsets[i] : i);
  }
  if (id === 'RunEndEncoded') {
    const run = runOf(column, start);
    const valid = column.children[1].validReader();
    return (i) => valid(run(i));
  }
  const validity = column.validity;
  if (validity === null) return () => true;
  const first = column.validityBitOffset;
  return (i) => bit(validity, first + i) === 1;
}

/**
 * Whether a row's value is its element of `values` as it is (ints, time, duration,
 * float32/64), which toArray then copies without a reader.
 */
export function isDirect(type, options) {
  switch (type.id) {
    case 'Int': case 'Time': case 'Duration':
      return options === undefined || options.useBigInt || (type.id !== 'Duration' && type.bitWidth !== 64);
    case 'Float':
      return type.bitWidth !== 16;
    default:
      return false;
  }
}

/** `(i) => column.get(i)`: the value of row i, or null, with the validity bit tested inline. */
export function rowReader(column, start, options) {
  const { type } = column;
  if (['Null', 'Union', 'RunEndEncoded'].includes(type.id)) return valueReader(column, start, options);
  const validity = column.validity;
  const first = column.validityBitOffset;
  if (isDirect(type, options)) {
    const values = column[VALUES_NOW];
    if (validity === null) return (i) => values[i];
    return (i) => {
      const j = first + i;
      return (validity[j >> 3] >> (j & 7)) & 1 ? values[i] : null;
    };
  }
  const read = valueReader(column, start, options);
  if (validity === null) return read;
  return (i) => {
    const j = first + i;
    return (validity[j >> 3] >> (j & 7)) & 1 ? read(i) : null;
  };
}

/** `(i) => typeIds[i]`'s child index, for a union. */
function unionChild(column) {
  const typeIds = column.typeIds;
  const index = new Map(column.type.typeIds.map((id, child) => [id, child]));
  return (i) => index.get(typeIds[i]);
}

/** `(i) => the row of the values child that holds row i` of a run-end encoded column. */
export function runOf(column, start) {
  const ends = column.children[0][VALUES_NOW];
  const big = ends instanceof BigInt64Array;
  return (i) => {
    const row = big ? BigInt(start + i) : start + i;
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] > row) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

/** Row i's value, read without looking at its validity. */
function valueReader(column, start, options) {
  const { type } = column;
  const values = column[VALUES_NOW];
  switch (type.id) {
    case 'Null':
      return () => null;
    case 'Bool': {
      const first = start & 7;
      return (i) => bit(values, first + i) === 1;
    }
    case 'Int':
    case 'Time':
    case 'Duration':
      return isDirect(type, options) ? (i) => values[i] : safeReader(column, values);
    case 'Float':
      return type.bitWidth === 16 ? (i) => float16(values[i]) : (i) => values[i];
    case 'Date': {
      const ms = type.unit === 'DAY' ? (i) => 86400000 * values[i] : (i) => Number(values[i]);
      return options?.useDate ? (i) => new Date(ms(i)) : ms;
    }
    case 'Timestamp': {
      const ms = TIMESTAMP_MS[type.unit];
      return options?.useDate ? (i) => new Date(ms(values[i])) : (i) => ms(values[i]);
    }
    case 'Interval':
      return intervalReader(values, type.unit);
    case 'Decimal':
      return scaled(decimalReader(values, type.bitWidth), type.scale, options?.useDecimal);
    case 'FixedSizeBinary': {
      const width = type.byteWidth;
      return (i) => values.slice(i * width, (i + 1) * width);
    }
    case 'Utf8': case 'Binary':
      return bytesReader(values, column.offsets, type.id === 'Utf8');
    case 'LargeUtf8': case 'LargeBinary': {
      const offsets = column.offsets;
      const isText = type.id === 'LargeUtf8';
      return (i) => {
        const start = Number(offsets[i]);
        const end = Number(offsets[i + 1]);
        return isText ? text(values, start, end) : values.slice(start, end);
      };
    }
    case 'Utf8View': case 'BinaryView':
      return viewReader(values, column.dataBuffers, type.id === 'Utf8View');
    case 'List': case 'LargeList': case 'Map':
      return listReader(column, column.offsets, undefined, options);
    case 'ListView': case 'LargeListView':
      return listReader(column, column.offsets, column.sizes, options);
    case 'FixedSizeList': {
      const child = column.children[0].reader(options);
      const size = type.listSize;
      return (i) => {
        const out = new Array(size);
        for (let k = 0; k < size; k++) out[k] = child(i * size + k);
        return out;
      };
    }
    case 'Struct': {
      const names = column.children.map((c) => c.name);
      const readers = column.children.map((c) => c.reader(options));
      // Each row starts as a copy of one with every key as its own property, as in
      // makeRows: a field named `__proto__` is then a value, not the row's prototype.
      const template = Object.fromEntries(names.map((name) => [name, null]));
      return (i) => {
        const row = { ...template };
        for (let k = 0; k < names.length; k++) row[names[k]] = readers[k](i);
        return row;
      };
    }
    case 'Union': {
      const readers = column.children.map((c) => c.reader(options));
      const child = unionChild(column);
      const offsets = type.mode === 'Dense' ? column.offsets : undefined;
      return (i) => readers[child(i)](offsets ? offsets[i] : i);
    }
    case 'Dictionary': {
      const dictionary = column.dictionary.reader(options);
      return (i) => dictionary(Number(values[i]));
    }
    case 'RunEndEncoded': {
      const run = runOf(column, start);
      const read = column.children[1].reader(options);
      return (i) => read(run(i));
    }
    default:
      throw new Error(`column "${column.name}" has type ${type.id}, which Quiver cannot read in JS`);
  }
}

/**
 * Row i of a list, map or list view: its child's items from `offsets[i]` to
 * `offsets[i + 1]`, or for a list view (`sizes` given) to `offsets[i] + sizes[i]`.
 */
function listReader(column, offsets, sizes, options) {
  const [items] = column.children;
  if (column.type.id !== 'Map' && isDirect(items.type, options) && items.nullCount === 0) {
    // Items that are their elements: copied from the child's values, no call per item.
    const itemValues = items[VALUES_NOW];
    return (i) => {
      const first = Number(offsets[i]);
      const out = new Array(sizes === undefined ? Number(offsets[i + 1]) - first : Number(sizes[i]));
      for (let k = 0; k < out.length; k++) out[k] = itemValues[first + k];
      return out;
    };
  }
  const child = entryReader(column, options);
  const read = (i) => {
    const first = Number(offsets[i]);
    const end = sizes === undefined ? Number(offsets[i + 1]) : first + Number(sizes[i]);
    const out = [];
    for (let k = first; k < end; k++) out.push(child(k));
    return out;
  };
  return column.type.id === 'Map' && options?.useMap ? (i) => new Map(read(i)) : read;
}

/** A list's element reader; for a map, entries become [key, value] pairs. */
function entryReader(column, options) {
  const [entries] = column.children;
  if (column.type.id !== 'Map') return entries.reader(options);
  const [keys, items] = entries.children.map((c) => c.reader(options));
  return (k) => [keys(k), items(k)];
}

function intervalReader(values, unit) {
  switch (unit) {
    case 'YEAR_MONTH':
      return (i) => values[i];
    case 'DAY_TIME':
      return (i) => ({ days: values[2 * i], milliseconds: values[2 * i + 1] });
    default: {
      const wide = new BigInt64Array(values.buffer, values.byteOffset, values.length / 2);
      return (i) => ({ months: values[4 * i], days: values[4 * i + 1], nanoseconds: wide[2 * i + 1] });
    }
  }
}

/** Utf8/Binary with int32 offsets: a copy of a row's bytes, or its string. */
function bytesReader(values, offsets, isText) {
  if (!isText) return (i) => values.slice(offsets[i], offsets[i + 1]);
  return (i) => text(values, offsets[i], offsets[i + 1]);
}

/** Utf8View/BinaryView: 16-byte views, short values inline, longer ones in `data`. */
function viewReader(views, data, isText) {
  const inline = new Uint8Array(views.buffer, views.byteOffset, views.byteLength);
  return (i) => {
    const size = views[4 * i];
    const bytes = size <= 12 ? inline : data[views[4 * i + 2]];
    const start = size <= 12 ? 16 * i + 4 : views[4 * i + 3];
    return isText ? text(bytes, start, start + size) : bytes.slice(start, start + size);
  };
}

/** Decimal `(i) => unscaled bigint`, from little-endian 64-bit words (the top one signed). */
function decimalReader(values, bitWidth) {
  if (bitWidth <= 64) return (i) => BigInt(values[i]);
  const words = bitWidth / 64;
  return (i) => {
    let value = values[i * words + words - 1];
    for (let w = words - 2; w >= 0; w--) value = (value << 64n) | BigInt.asUintN(64, values[i * words + w]);
    return value;
  };
}

/**
 * useBigInt: false: a 64-bit value as a number, or a RangeError naming the column and row
 * where it is beyond Number's safe integers (flechette throws there too).
 */
function safeReader(column, values) {
  return (i) => {
    const value = Number(values[i]);
    if (Number.isSafeInteger(value)) return value;
    throw new RangeError(`column "${column.name}" row ${i} holds ${values[i]}, beyond Number.MAX_SAFE_INTEGER `
      + '(2^53 - 1): read it with useBigInt: true');
  };
}

/**
 * A decimal reader of `useDecimal`'s kind: the unscaled bigint as `read` gives it, a number
 * (as flechette computes it), or the exact decimal string ("123.45", "-0.05", "1200").
 */
function scaled(read, scale, kind = 'bigint') {
  if (kind === 'bigint') return read;
  if (scale <= 0) {
    const by = 10n ** BigInt(-scale);
    return kind === 'number' ? (i) => Number(read(i) * by) : (i) => (read(i) * by).toString();
  }
  const by = 10n ** BigInt(scale);
  if (kind === 'number') return (i) => divide(read(i), by);
  return (i) => {
    const value = read(i);
    const digits = (value < 0n ? -value : value).toString().padStart(scale + 1, '0');
    return `${value < 0n ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  };
}
