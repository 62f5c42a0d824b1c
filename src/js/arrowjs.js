// apache-arrow JS RecordBatch/Table objects over Quiver's wasm memory, built with the
// caller's own `arrow` module from batch layouts (see layout.js), with no call into wasm.
//
// Arrow JS reads its Data buffers directly, so nothing can re-derive a view on access:
// - zero-copy (the default where memory is a resizable buffer): Data buffers are views of
//   wasm memory, which survive growth; the result holds a clone of the source batch or
//   table (shared buffers, no copy), so the memory lives as long as the result does, even
//   after the caller frees the source.
// - copy (the default elsewhere, e.g. Node 20): every buffer is `.slice()`d out of wasm.
// - `{ zeroCopy: true }` on a non-resizable memory: views, which DETACH and read as empty
//   when wasm memory next grows (any later decode may grow it). Use the result at once.
// Strings: Arrow JS decodes them with TextDecoder, which refuses views of a resizable
// buffer, so on resizable memory the UTF-8 bytes (and a Utf8View's views, which inline
// short strings) are copied; offsets, validity and every other buffer are still shared.
// The copy is made when Arrow JS first reads that Data's bytes (a getter that replaces
// itself), like Arrow JS's own lazy decoding: code that never reads string contents, or
// reads only a few columns, pays for none or few of them.

import { fixedWidth, parseLayout } from './layout.js';
import { keepAlive } from './owner.js';

const KEEP = Symbol.for('quiver.source');
// The buffers of an Arrow JS Data.
const BUFFERS = ['values', 'nullBitmap', 'valueOffsets', 'typeIds'];
const ARENA_BYTES = 4 << 20;

/** Whether to hand out views (else copies), from `options.zeroCopy` and the memory. */
function zeroCopy(options, memory) {
  const zero = options?.zeroCopy;
  if (zero !== undefined && typeof zero !== 'boolean') {
    throw new Error(`toArrowJS option zeroCopy must be a boolean, found ${typeof zero}`);
  }
  return zero ?? memory.buffer.resizable === true;
}

function checkArrow(arrow) {
  if (typeof arrow?.makeData !== 'function' || typeof arrow?.RecordBatch !== 'function') {
    throw new Error('toArrowJS expects the apache-arrow module as its second argument (import * as arrow from "apache-arrow")');
  }
}

const asMap = (metadata) => new Map(Object.entries(metadata ?? {}));

/** The Arrow JS schema for the field descriptors of `types` (JSON), with its metadata. */
function arrowSchema(arrow, types, metadata) {
  const ids = { next: 0 };
  const fields = JSON.parse(types).map((f) => arrowField(arrow, f, f.name, ids));
  return new arrow.Schema(fields, asMap(metadata));
}

function arrowField(arrow, field, path, ids) {
  return new arrow.Field(field.name, arrowType(arrow, field, path, ids), field.nullable, asMap(field.metadata));
}

function arrowType(arrow, field, path, ids) {
  const t = field.type;
  const kids = () => field.children.map((c) => arrowField(arrow, c, `${path}.${c.name}`, ids));
  switch (t.id) {
    case 'Null': return new arrow.Null();
    case 'Bool': return new arrow.Bool();
    case 'Int': return new arrow.Int(t.signed, t.bitWidth);
    case 'Float': return new { 16: arrow.Float16, 32: arrow.Float32, 64: arrow.Float64 }[t.bitWidth]();
    case 'Utf8': case 'LargeUtf8': case 'Utf8View':
    case 'Binary': case 'LargeBinary': case 'BinaryView':
      return new arrow[t.id]();
    case 'FixedSizeBinary': return new arrow.FixedSizeBinary(t.byteWidth);
    case 'Decimal': return new arrow.Decimal(t.scale, t.precision, t.bitWidth);
    case 'Date': return t.unit === 'DAY' ? new arrow.DateDay() : new arrow.DateMillisecond();
    case 'Time': return new arrow.Time(arrow.TimeUnit[t.unit], t.bitWidth);
    case 'Timestamp': return new arrow.Timestamp(arrow.TimeUnit[t.unit], t.timezone ?? null);
    case 'Duration': return new arrow.Duration(arrow.TimeUnit[t.unit]);
    case 'Interval': return new arrow.Interval(arrow.IntervalUnit[t.unit]);
    case 'List': return new arrow.List(kids()[0]);
    case 'LargeList': return new arrow.LargeList(kids()[0]);
    case 'FixedSizeList': return new arrow.FixedSizeList(t.listSize, kids()[0]);
    case 'Struct': return new arrow.Struct(kids());
    case 'Map': return new arrow.Map_(kids()[0], t.keysSorted);
    case 'Union': return new arrow.Union(arrow.UnionMode[t.mode], t.typeIds, kids());
    case 'Dictionary': {
      const values = arrowType(arrow, field.children[0], path, ids);
      return new arrow.Dictionary(values, arrowType(arrow, { type: t.indices }, path, ids), ids.next++, t.ordered === true);
    }
    default:
      throw new Error(`toArrowJS: field "${path}" has type ${t.id}, which apache-arrow JS cannot represent`);
  }
}

/**
 * Builds Arrow JS Data for one node. `shift` and `length` select rows of the node as in
 * column.js (a struct's offset applies to its children). Buffers are views from row 0,
 * so every Data has offset 0 and Arrow JS needs no offset arithmetic of ours.
 */
function makeData(ctx, type, field, node, shift = 0, length = node.length) {
  const { arrow, view, made } = ctx;
  const start = node.offset + shift;
  const props = { type, length };
  if (shift === 0 && length === node.length) props.nullCount = node.nullCount;
  if (node.validity) props.nullBitmap = ctx.bitmap(node.validity.address, node.validity.bitOffset + shift, length);
  const buffer = (i, Array, first, count) =>
    view(Array, node.buffers[i].address + first * Array.BYTES_PER_ELEMENT, count);
  const child = (i, childShift, childLength) =>
    makeData(ctx, type.children[i].type, field.children[i], node.children[i], childShift, childLength);
  const width = type.typeId === arrow.Type.Dictionary ? undefined : fixedWidth(field.type);
  if (width) {
    props.data = buffer(0, width.Array, start * width.stride, length * width.stride);
    return made(props);
  }
  switch (field.type.id) {
    case 'Null':
      props.nullCount = length;
      break;
    case 'Bool':
      props.data = ctx.bitmap(node.buffers[0].address, start, length);
      break;
    case 'Utf8': case 'Binary': case 'LargeUtf8': case 'LargeBinary': {
      const large = field.type.id.startsWith('Large');
      const { address, bytes } = node.buffers[1];
      props.valueOffsets = buffer(0, large ? BigInt64Array : Int32Array, start, length + 1);
      props.data = view(Uint8Array, address, bytes);
      const data = made(props);
      if (field.type.id.includes('Utf8')) ctx.textLater(data, 'values', () => ctx.text(address, bytes));
      return data;
    }
    case 'Utf8View': case 'BinaryView': {
      const address = node.buffers[0].address + start * 16;
      props.views = view(Uint8Array, address, length * 16);
      props.variadicBuffers = node.buffers.slice(1).map((b) => view(Uint8Array, b.address, b.bytes));
      const data = made(props);
      if (field.type.id === 'Utf8View') {
        ctx.textLater(data, 'values', () => ctx.text(address, length * 16));
        ctx.textLater(data, 'variadicBuffers', () => node.buffers.slice(1).map((b) => ctx.text(b.address, b.bytes)));
      }
      return data;
    }
    case 'List': case 'LargeList': case 'Map':
      props.valueOffsets = buffer(0, field.type.id === 'LargeList' ? BigInt64Array : Int32Array, start, length + 1);
      props.child = child(0);
      break;
    case 'FixedSizeList':
      props.child = child(0, start * type.listSize, length * type.listSize);
      break;
    case 'Struct':
      props.children = type.children.map((_, i) => child(i, start, length));
      break;
    case 'Union':
      props.typeIds = buffer(0, Int8Array, start, length);
      if (field.type.mode === 'Dense') {
        props.valueOffsets = buffer(1, Int32Array, start, length);
        props.children = type.children.map((_, i) => child(i));
      } else {
        props.children = type.children.map((_, i) => child(i, start, length));
      }
      delete props.nullCount;
      break;
    case 'Dictionary': {
      const indices = fixedWidth(field.type.indices);
      props.data = buffer(0, indices.Array, start, length);
      const values = makeData(ctx, type.dictionary, field.children[0], node.children[0]);
      props.dictionary = arrow.makeVector(values);
      break;
    }
    default:
      throw new Error(`toArrowJS: field "${field.name}" has type ${field.type.id}, which apache-arrow JS cannot represent`);
  }
  return made(props);
}

/**
 * How buffers leave wasm memory: as views, or as copies. With views, every Data and the
 * buffers it ends up with keep `keeper` reachable, so that whatever Arrow JS derives from
 * the result (a slice, a child vector, a buffer taken out) holds the memory it reads.
 * They are marked after makeData: Arrow JS wraps some buffers in new arrays (a Uint8Array
 * always; a decimal's as Uint32Array), which the views' own marks would not reach.
 */
function context(arrow, memory, zero, keeper) {
  const view = (Array, address, count) => {
    const v = new Array(memory.buffer, address, count);
    return zero ? v : v.slice();
  };
  const made = (props) => {
    const data = arrow.makeData(props);
    if (zero) {
      keep(data, keeper);
      // Read before any getter of textLater replaces `values`.
      for (const key of BUFFERS) keepAlive(data[key], keeper);
      data.variadicBuffers?.forEach((b) => keepAlive(b, keeper));
    }
    return data;
  };
  // A bitmap from bit `first`: a view when it starts on a byte, else realigned (a copy;
  // never needed for decoded IPC, whose bitmaps all start at bit 0).
  const bitmap = (address, first, count) => {
    if ((first & 7) === 0) return view(Uint8Array, address + (first >> 3), (count + 7) >> 3);
    const source = new Uint8Array(memory.buffer, address, (first + count + 7) >> 3);
    const out = new Uint8Array((count + 7) >> 3);
    for (let i = 0; i < count; i++) {
      const j = first + i;
      out[i >> 3] |= ((source[j >> 3] >> (j & 7)) & 1) << (i & 7);
    }
    return out;
  };
  // UTF-8 that Arrow JS will hand to TextDecoder (see the top of this file), copied with
  // set() into arenas that double up to 4 MiB: in Chromium slice() of a view of a
  // resizable buffer is slow, and one allocation per buffer costs more than the copy.
  let arena = new Uint8Array(0);
  let used = 0;
  const text = (address, count) => {
    if (used + count > arena.length) {
      arena = new Uint8Array(Math.max(count, Math.min(2 * arena.length, ARENA_BYTES), 65536));
      used = 0;
    }
    const out = arena.subarray(used, used + count);
    out.set(new Uint8Array(memory.buffer, address, count));
    used += (count + 7) & ~7; // keep every copy 8-byte aligned, as Arrow buffers are
    return out;
  };
  // On resizable memory, `data[key]` becomes a getter that copies on first read and then
  // replaces itself with the copy; elsewhere the views work, and copies (`zero` false)
  // are plain arrays already, made while the source lives.
  const textLater = (data, key, copy) => {
    if (!zero || !memory.buffer.resizable) return;
    const settle = (value) =>
      Object.defineProperty(data, key, { value, writable: true, enumerable: true, configurable: true });
    Object.defineProperty(data, key, {
      get: () => settle(copy())[key],
      set: settle,
      enumerable: true,
      configurable: true,
    });
  };
  return { arrow, view, made, bitmap, text, textLater };
}

function arrowBatch(ctx, schema, layout) {
  const { numRows, fields, nodes } = parseLayout(layout);
  const { arrow } = ctx;
  const children = schema.fields.map((f, i) => makeData(ctx, f.type, fields[i], nodes[i]));
  const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: numRows, nullCount: 0, children });
  return new arrow.RecordBatch(schema, data);
}

/**
 * Keeps `keeper` (a Quiver batch or table sharing the buffers) reachable from `target`.
 * A plain store under a symbol, which keys and JSON skip: `defineProperty` is a call into
 * the engine, a tenth of toArrowJS's time in a Chromium profile.
 */
function keep(target, keeper) {
  target[KEEP] = keeper;
}

/** `build()`, or, if it throws, `keeper` freed at once rather than by the collector. */
function orFree(keeper, build) {
  try {
    return build();
  } catch (error) {
    keeper.free();
    throw error;
  }
}

/**
 * An Arrow JS RecordBatch over the batch that `layout` describes. `keeper` is a clone of
 * the Quiver batch: held by the result when it views memory, freed at once otherwise.
 */
export function arrowRecordBatch(layout, schema, arrow, options, memory, keeper) {
  const [zero, batch] = orFree(keeper, () => {
    checkArrow(arrow);
    const zero = zeroCopy(options, memory);
    const ctx = context(arrow, memory, zero, keeper);
    return [zero, arrowBatch(ctx, arrowSchema(arrow, layout.types, schema.metadata), layout)];
  });
  if (zero) {
    keep(batch, keeper);
  } else {
    keeper.free();
  }
  return batch;
}

/** An Arrow JS Table over the batches that `layouts` describe (see arrowRecordBatch). */
export function arrowTable(types, layouts, quiverSchema, arrow, options, memory, keeper) {
  const [zero, table, batches] = orFree(keeper, () => {
    checkArrow(arrow);
    const zero = zeroCopy(options, memory);
    const ctx = context(arrow, memory, zero, keeper);
    const schema = arrowSchema(arrow, types, quiverSchema.metadata);
    const batches = layouts.map((layout) => arrowBatch(ctx, schema, layout));
    // From the batches' schema, as Arrow JS's own reader does: RecordBatch rewrites its
    // schema (Schema.assign merges duplicate field names), which then differs from ours.
    return [zero, batches.length > 0 ? new arrow.Table(batches) : new arrow.Table(schema), batches];
  });
  if (zero) {
    keep(table, keeper);
    for (const batch of batches) keep(batch, keeper);
  } else {
    keeper.free();
  }
  return table;
}
