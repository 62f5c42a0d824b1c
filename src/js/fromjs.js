// The JS half of `fromArrowJS` and `batchFromColumns`: describe a batch (its schema, and
// per array node in pre-order its length, bit offset and buffer sizes) so that wasm can
// allocate every destination in one call, then copy each source once into wasm memory.
//
// A batch description is `{ header, sources }`: `header` is one Uint32Array
// [numRows, nodeCount, (length, bitOffset) per node, byte size per buffer], and each
// source is a Uint8Array to copy, or a function that writes its destination (the builder's
// strings, booleans and validity go straight into wasm memory). Buffer order per node:
// validity (empty for no nulls; none for Null), then values / offsets+values / offsets /
// dictionary indices, then children (a dictionary's values are its child).

const EMPTY = new Uint8Array(0);
// How Arrow JS marks its Vectors (Vector.isVector), whichever copy of the library made them.
const IS_VECTOR = Symbol.for('apache-arrow/Vector');
const encoder = new TextEncoder();

// Wasm memory's buffer while a batch is being described (see `bytesOf`).
let wasmBuffer;

/**
 * The first `byteLength` bytes of `view` as a source. A view of wasm memory itself (a
 * Quiver column's values, a zero-copy toArrowJS result) is copied within memory from its
 * offset instead: allocating the destinations can grow memory, which detaches every view
 * of it outside resizable memory, and a detached view would copy nothing.
 */
function bytesOf(view, byteLength) {
  const n = Math.min(byteLength, view.byteLength);
  if (view.buffer !== wasmBuffer) return new Uint8Array(view.buffer, view.byteOffset, n);
  const from = view.byteOffset;
  return sized((buffer, address) => new Uint8Array(buffer).copyWithin(address, from, from + n), n);
}

/** Runs `describe` with `memory` known to `bytesOf`. */
function describing(memory, describe) {
  wasmBuffer = memory.buffer;
  try {
    return describe();
  } finally {
    wasmBuffer = undefined;
  }
}

/** How deeply types may nest: `MAX_NESTING` in spec.rs, which refuses deeper ones. */
const MAX_NESTING = 64;

/**
 * Arrow JS `DataType` → the plain type description that Rust parses (spec.rs). `depth`
 * counts the types around it; `name` is the top-level field's, for the error.
 */
function typeSpec(type, name, depth) {
  if (depth > MAX_NESTING) {
    throw new Error(`fromArrowJS: field ${JSON.stringify(name)}: types nest deeper than ${MAX_NESTING} levels`);
  }
  const spec = {
    id: type.typeId,
    name: String(type),
    bitWidth: type.bitWidth,
    isSigned: type.isSigned,
    precision: type.precision,
    scale: type.scale,
    unit: type.unit,
    timezone: type.timezone,
    byteWidth: type.byteWidth,
    listSize: type.listSize,
    keysSorted: type.keysSorted,
    isOrdered: type.isOrdered,
    children: (type.children ?? []).map((child) => fieldSpec(child, depth + 1, name)),
  };
  if (type.typeId === -1) {
    spec.indices = typeSpec(type.indices, name, depth + 1);
    spec.dictionary = typeSpec(type.dictionary, name, depth + 1);
  }
  return spec;
}

const fieldSpec = (field, depth = 1, topName = field.name) => ({
  name: field.name,
  nullable: field.nullable,
  type: typeSpec(field.type, topName, depth),
  metadata: Object.fromEntries(field.metadata ?? []),
});

/** Appends one Arrow JS `Data` (and its children) to `nodes`/`sources`. */
function walkData(data, name, nodes, sources) {
  const { type, length, offset } = data;
  nodes.push(length, offset & 7);
  if (type.typeId === 1) return; // Null: no buffers
  const bitBytes = (bits) => {
    const bytes = bits.subarray(offset >> 3, (offset + length + 7) >> 3);
    return bytesOf(bytes, bytes.byteLength);
  };
  const bitmap = data.nullBitmap;
  sources.push(data.nullCount > 0 && bitmap?.length > 0 ? bitBytes(bitmap) : EMPTY);
  switch (type.typeId) {
    case 6: // Bool: values are not sliced, they start at the same bit as validity
      sources.push(bitBytes(data.values));
      return;
    case 4: case 5: case 19: case 20: { // (Large)Binary, (Large)Utf8
      const offsets = data.valueOffsets.subarray(0, length + 1);
      sources.push(bytesOf(offsets, offsets.byteLength));
      // Through the last offset, also of no rows: a slice's first offset may be past 0.
      const end = offsets.length > 0 ? Number(offsets[offsets.length - 1]) : 0;
      sources.push(bytesOf(data.values, end));
      return;
    }
    case 12: case 21: case 17: { // (Large)List, Map: offsets sliced, child to the last
      const offsets = data.valueOffsets.subarray(0, length + 1);
      sources.push(bytesOf(offsets, offsets.byteLength));
      const end = offsets.length > 0 ? Number(offsets[offsets.length - 1]) : 0;
      const child = data.children[0];
      walkData(end < child.length ? child.slice(0, end) : child, name, nodes, sources);
      return;
    }
    case 13: case 16: // Struct, FixedSizeList: children sliced by Arrow JS
      for (const child of data.children) walkData(child, name, nodes, sources);
      return;
    case -1: { // Dictionary: indices, then the dictionary's values as the child
      const values = data.values;
      sources.push(bytesOf(values, values.BYTES_PER_ELEMENT * length));
      const chunks = data.dictionary?.data ?? [];
      if (chunks.length !== 1) {
        throw new Error(`fromArrowJS: field ${JSON.stringify(name)}: a dictionary of ${chunks.length} chunks is not supported (expected 1)`);
      }
      walkData(chunks[0], name, nodes, sources);
      return;
    }
    default: { // fixed width: values already start at the first row
      const values = data.values;
      if (values === undefined) return; // an unsupported type: Rust names it
      sources.push(bytesOf(values, values.BYTES_PER_ELEMENT * data.stride * length));
    }
  }
}

function header(numRows, nodes, sources) {
  const head = new Uint32Array(2 + nodes.length + sources.length);
  head[0] = numRows;
  head[1] = nodes.length / 2;
  head.set(nodes, 2);
  sources.forEach((s, i) => { head[2 + nodes.length + i] = s.byteLength; });
  return head;
}

function describeArrowBatch(batch, fields) {
  const nodes = [];
  const sources = [];
  batch.data.children.forEach((column, i) => {
    const { name } = fields[i];
    walkData(columnData(column, name), name, nodes, sources);
  });
  return { header: header(batch.numRows, nodes, sources), sources };
}

/**
 * A batch's column as a `Data`. A Table of zero rows made from Vectors
 * (`new Table({ name: vector })`) gets its one batch from `new RecordBatch(vectors)`,
 * which keeps each Vector itself as the column, where a Data belongs.
 */
function columnData(column, name) {
  if (column[IS_VECTOR] !== true) return column;
  const [first] = column.data;
  if (first.length !== column.length) {
    throw new Error(`fromArrowJS: field ${JSON.stringify(name)}: a Vector of ${column.data.length} chunks as a RecordBatch column is not supported (expected 1)`);
  }
  return first;
}

/**
 * An apache-arrow JS RecordBatch or Table → `{ table, schema, batches }`. The schema goes
 * as one JSON string: one crossing, where reading a plain object from Rust takes one per
 * property.
 */
export function describeArrowJS(value, memory) {
  return describing(memory, () => describeArrow(value));
}

function describeArrow(value) {
  const isTable = Array.isArray(value?.batches) && value?.schema !== undefined;
  const isBatch = !isTable && value?.data?.children !== undefined && value?.schema !== undefined;
  if (!isTable && !isBatch) {
    throw new Error(`fromArrowJS expects an apache-arrow RecordBatch or Table, found ${kind(value)}`);
  }
  const schemaFields = value.schema.fields;
  const schema = { fields: schemaFields.map((field) => fieldSpec(field)), metadata: Object.fromEntries(value.schema.metadata ?? []) };
  return {
    table: isTable,
    schema: JSON.stringify(schema),
    batches: (isTable ? value.batches : [value]).map((b) => describeArrowBatch(b, schemaFields)),
  };
}

function kind(value) {
  if (value === null || typeof value !== 'object') return value === null ? 'null' : typeof value;
  if (Array.isArray(value)) return 'an array';
  return value.constructor?.name ?? 'an object';
}

/**
 * Copies (or writes) every source of `batch` to the matching address, in one pass. Each
 * must still have the size its header gave it: Rust takes the destinations as written.
 */
export function fillBuffers(batch, addresses, memory) {
  const bytes = new Uint8Array(memory.buffer);
  const { header, sources } = batch;
  const sizes = header.subarray(header.length - sources.length);
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i];
    if (typeof source === 'function') source(memory.buffer, addresses[i]);
    else if (source.byteLength === sizes[i]) bytes.set(source, addresses[i]);
    else throw new Error(`a source array has ${source.byteLength} bytes, expected ${sizes[i]}: its buffer was detached or resized while it was being copied`);
  }
}

// ---- batchFromColumns: plain JS columns ----

const TYPED = [
  [Int8Array, 'Int8', 8, true], [Int16Array, 'Int16', 16, true], [Int32Array, 'Int32', 32, true],
  [BigInt64Array, 'Int64', 64, true], [Uint8Array, 'Uint8', 8, false], [Uint16Array, 'Uint16', 16, false],
  [Uint32Array, 'Uint32', 32, false], [BigUint64Array, 'Uint64', 64, false],
];

function typedSpec(array) {
  for (const [ctor, name, bitWidth, isSigned] of TYPED) {
    if (array instanceof ctor) return { id: 2, name, bitWidth, isSigned };
  }
  if (array instanceof Float32Array) return { id: 3, name: 'Float32', precision: 1 };
  if (array instanceof Float64Array) return { id: 3, name: 'Float64', precision: 2 };
  return undefined;
}

/** A writer of `n` bits into wasm memory: bit i is `bit(i)`. */
const bitWriter = (n, bit) => (buffer, address) => {
  const out = new Uint8Array(buffer, address, (n + 7) >> 3);
  out.fill(0);
  for (let i = 0; i < n; i++) if (bit(i)) out[i >> 3] |= 1 << (i & 7);
};

/** UTF-8 length as TextEncoder writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
function utf8Length(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 2 UTF-16 units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/** Writes `s` as UTF-8 at `out[at]`, as TextEncoder would (lone surrogates as U+FFFD). */
function writeUtf8(s, out, at) {
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      out[at++] = c;
    } else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = s.charCodeAt(i + 1);
        if (c <= 0xdbff && (next & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          i++;
          out[at++] = 0xf0 | (c >> 18);
          out[at++] = 0x80 | ((c >> 12) & 0x3f);
          out[at++] = 0x80 | ((c >> 6) & 0x3f);
          out[at++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    }
  }
  return at;
}

function stringSources(name, values) {
  const n = values.length;
  const lengths = new Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const s = values[i];
    lengths[i] = s === null || s === undefined ? 0 : utf8Length(s);
    total += lengths[i];
  }
  if (total > 0x7fffffff) {
    throw new Error(`batchFromColumns: column ${JSON.stringify(name)}: ${total} bytes of UTF-8 exceed the 2 GiB of a Utf8 column`);
  }
  const offsets = (buffer, address) => {
    const out = new Int32Array(buffer, address, n + 1);
    let at = 0;
    out[0] = 0;
    for (let i = 0; i < n; i++) out[i + 1] = at += lengths[i];
  };
  offsets.byteLength = (n + 1) * 4;
  const utf8 = (buffer, address) => {
    const out = new Uint8Array(buffer, address, total);
    if (buffer.resizable) {
      // Chromium's encodeInto refuses views of a resizable buffer; encoding by hand
      // still writes each byte once, in place.
      let at = 0;
      for (let i = 0; i < n; i++) if (lengths[i] > 0) at = writeUtf8(values[i], out, at);
      return;
    }
    // One encodeInto for the whole column; if joining paired two lone surrogates, the
    // count differs, so encode string by string instead.
    const joined = values.map((s) => s ?? '').join('');
    if (encoder.encodeInto(joined, out).written === total) return;
    let at = 0;
    for (let i = 0; i < n; i++) {
      if (lengths[i] > 0) encoder.encodeInto(values[i], out.subarray(at, at + lengths[i]));
      at += lengths[i];
    }
  };
  utf8.byteLength = total;
  return [offsets, utf8];
}

function sized(fn, byteLength) {
  fn.byteLength = byteLength;
  return fn;
}

const typeOfValue = (v) => (v === null || v === undefined ? 'null' : typeof v);

/** One plain column → its field spec and sources; errors name the column. */
function plainColumn(name, column, nodes, sources) {
  const where = `batchFromColumns: column ${JSON.stringify(name)}`;
  const typed = ArrayBuffer.isView(column) ? typedSpec(column) : undefined;
  if (typed !== undefined) {
    nodes.push(column.length, 0);
    sources.push(EMPTY, bytesOf(column, column.byteLength));
    return { name, nullable: false, type: typed };
  }
  if (ArrayBuffer.isView(column)) {
    throw new Error(`${where}: a ${kind(column)} has no Arrow type here; pass an Int8Array to BigInt64Array, a Uint8Array to BigUint64Array, a Float32Array or a Float64Array`);
  }
  if (!Array.isArray(column)) {
    throw new Error(`${where}: expected a typed array or an array of strings, booleans, numbers or bigints, found ${kind(column)}`);
  }
  const n = column.length;
  let kindFound = 'null';
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const k = typeOfValue(column[i]);
    if (k === 'null') { nulls++; continue; }
    if (k === 'bigint' && BigInt.asIntN(64, column[i]) !== column[i]) {
      throw new Error(`${where}: entry ${i} (${column[i]}) does not fit in an int64`);
    }
    if (kindFound === 'null') {
      if (!['string', 'boolean', 'number', 'bigint'].includes(k)) {
        throw new Error(`${where}: entry ${i} is ${k === 'object' ? kind(column[i]) : `a ${k}`}; supported entries are strings, booleans, numbers, bigints and null`);
      }
      kindFound = k;
    } else if (k !== kindFound) {
      throw new Error(`${where}: entry ${i} is a ${k}, expected a ${kindFound} like the column's first value, or null`);
    }
  }
  nodes.push(n, 0);
  if (kindFound === 'null') return { name, nullable: true, type: { id: 1, name: 'Null' } };
  sources.push(nulls > 0 ? sized(bitWriter(n, (i) => column[i] != null), (n + 7) >> 3) : EMPTY);
  switch (kindFound) {
    case 'string':
      sources.push(...stringSources(name, column));
      return { name, nullable: true, type: { id: 5, name: 'Utf8' } };
    case 'boolean':
      sources.push(sized(bitWriter(n, (i) => column[i] === true), (n + 7) >> 3));
      return { name, nullable: true, type: { id: 6, name: 'Bool' } };
    case 'number':
      sources.push(sized((buffer, address) => {
        const out = new Float64Array(buffer, address, n);
        for (let i = 0; i < n; i++) out[i] = column[i] ?? 0;
      }, n * 8));
      return { name, nullable: true, type: { id: 3, name: 'Float64', precision: 2 } };
    default: // bigint
      sources.push(sized((buffer, address) => {
        const out = new BigInt64Array(buffer, address, n);
        for (let i = 0; i < n; i++) out[i] = column[i] ?? 0n; // each checked to fit above
      }, n * 8));
      return { name, nullable: true, type: { id: 2, name: 'Int64', bitWidth: 64, isSigned: true } };
  }
}

/** `{ name: column }` → the same description as `describeArrowJS`, one batch. */
export function describeColumns(columns, memory) {
  return describing(memory, () => describePlain(columns));
}

function describePlain(columns) {
  if (columns === null || typeof columns !== 'object' || Array.isArray(columns)) {
    throw new Error(`batchFromColumns expects an object of columns ({ name: column }), found ${kind(columns)}`);
  }
  const nodes = [];
  const sources = [];
  const entries = columns instanceof Map ? [...columns] : Object.entries(columns);
  for (const [name] of entries) {
    if (typeof name !== 'string') {
      throw new Error(`batchFromColumns expects column names that are strings, found ${typeof name} ${String(name)}`);
    }
  }
  let numRows;
  const fields = entries.map(([name, column]) => {
    const field = plainColumn(name, column, nodes, sources);
    const length = column.length;
    if (numRows === undefined) numRows = length;
    else if (length !== numRows) {
      throw new Error(`batchFromColumns: column ${JSON.stringify(name)} has ${length} rows, expected ${numRows} like column ${JSON.stringify(entries[0][0])}`);
    }
    return field;
  });
  return { table: false, schema: JSON.stringify({ fields, metadata: {} }), batches: [{ header: header(numRows ?? 0, nodes, sources), sources }] };
}
