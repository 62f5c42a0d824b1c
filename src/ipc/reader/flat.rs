//! Record batches whose columns are all flat (primitives, booleans, strings and binaries,
//! the columns of most streams) are built here, straight from the message body.
//!
//! arrow-ipc's decoder makes every array through a generic walk, `ArrayData` and
//! `make_array`, and checking the arrays afterwards turned each back into `ArrayData`: for
//! a 100-row batch of four flat columns that was about a third of the decode time in
//! Chromium. Here each column is made once, and checked as arrow's full validation would
//! check it: null counts against the bitmaps, offsets and UTF-8 (`validate.rs`), then the
//! batch's shape against its schema.
//!
//! The constructors used here panic on short or misaligned buffers. `check_buffers` has
//! kept every buffer inside the body before this runs, and the walk checks each node and
//! buffer as it takes it (the precheck's checks, `precheck.rs`, and the lengths arrow's
//! validation requires), before any constructor sees it.

use std::sync::Arc;

use arrow_array::types::{BinaryType, ByteArrayType, LargeBinaryType, LargeUtf8Type, Utf8Type};
use arrow_array::{
    make_array, ArrayRef, BooleanArray, GenericByteArray, RecordBatch, RecordBatchOptions,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_ipc::FieldNode;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use flatbuffers::{Follow, Vector};

use super::node_checks::{check_aligned, check_length, check_node};
use super::precheck::at;
use super::validate::{check_offsets, check_utf8, Offset};
use crate::ipc::error::{QuiverError, Result};

/// Types with a validity bitmap and at most an offsets and a data buffer, no children.
pub(crate) fn is_flat(data_type: &DataType) -> bool {
    use DataType::*;
    use TimeUnit::*;
    matches!(
        data_type,
        Boolean
            | Int8
            | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Date32
            | Date64
            | Time32(Second | Millisecond)
            | Time64(Microsecond | Nanosecond)
            | Timestamp(..)
            | Duration(_)
            | Utf8
            | LargeUtf8
            | Binary
            | LargeBinary
    )
}

/// Whether [`read_flat_batch`] reads this schema's batches.
pub(crate) fn all_flat(schema: &Schema) -> bool {
    schema.fields().iter().all(|f| is_flat(f.data_type()))
}

/// Builds the record batch that `batch` describes in `body`, for a schema whose fields
/// are all flat.
pub(crate) fn read_flat_batch(
    body: &Buffer,
    batch: arrow_ipc::RecordBatch<'_>,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let mut walk = Walk {
        body,
        batch,
        next_node: 0,
        next_buffer: 0,
    };
    let columns = schema
        .fields()
        .iter()
        .map(|field| walk.column(field))
        .collect::<Result<Vec<_>>>()?;
    let rows = usize::try_from(batch.length()).map_err(|_| {
        QuiverError::invalid(format!(
            "record batch has length {}, expected a non-negative length",
            batch.length()
        ))
    })?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

struct Walk<'a> {
    body: &'a Buffer,
    batch: arrow_ipc::RecordBatch<'a>,
    next_node: usize,
    next_buffer: usize,
}

impl Walk<'_> {
    fn column(&mut self, field: &Field) -> Result<ArrayRef> {
        let node = self.node(field)?;
        // `check_node` bounded both by i32::MAX.
        let (len, null_count) = (node.length() as usize, node.null_count() as usize);
        // Minimum buffer lengths in i64: on wasm32 a usize would overflow.
        let (rows, bitmap_bytes) = (node.length(), (node.length() + 7) / 8);
        // arrow-ipc ignores the validity buffer of a field without nulls.
        let validity = self.buffer(field, 1, if null_count > 0 { bitmap_bytes } else { 0 })?;
        let nulls = match null_count {
            0 => None,
            _ => Some(nulls(field, validity, len, null_count)?),
        };
        let array: ArrayRef = match field.data_type() {
            DataType::Boolean => {
                let values = BooleanBuffer::new(self.buffer(field, 1, bitmap_bytes)?, 0, len);
                // Both `len` long, as `new` asserts.
                Arc::new(BooleanArray::new(values, nulls))
            }
            DataType::Utf8 => self.bytes::<Utf8Type>(field, len, nulls)?,
            DataType::LargeUtf8 => self.bytes::<LargeUtf8Type>(field, len, nulls)?,
            DataType::Binary => self.bytes::<BinaryType>(field, len, nulls)?,
            DataType::LargeBinary => self.bytes::<LargeBinaryType>(field, len, nulls)?,
            other => {
                let width = other.primitive_width().unwrap_or(1);
                let values = self.buffer(field, width, rows * width as i64)?;
                primitive(other, values, len, nulls)
            }
        };
        Ok(array)
    }

    /// A string or binary column; string data must be UTF-8.
    fn bytes<T: ByteArrayType>(
        &mut self,
        field: &Field,
        len: usize,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayRef>
    where
        T::Offset: Offset,
    {
        let (offsets, data) = self.offsets_and_data::<T::Offset>(field, len)?;
        if matches!(T::DATA_TYPE, DataType::Utf8 | DataType::LargeUtf8) {
            check_utf8(&offsets, &data)?;
        }
        // SAFETY: offsets checked by `offsets_and_data`, strings' UTF-8 just above; `nulls`
        // has `len` bits, one for each value.
        let array = unsafe { GenericByteArray::<T>::new_unchecked(offsets, data, nulls) };
        Ok(Arc::new(array))
    }

    /// The offsets and data buffers of `len` strings or binaries, offsets checked against
    /// the data.
    fn offsets_and_data<O: Offset>(
        &mut self,
        field: &Field,
        len: usize,
    ) -> Result<(OffsetBuffer<O>, Buffer)> {
        let width = std::mem::size_of::<O>();
        // An empty column may leave out even the one offset that arrow-rs needs.
        let offsets_bytes = match len {
            0 => 0,
            _ => (len as i64 + 1) * width as i64,
        };
        let (offsets, data) = (
            self.buffer(field, width, offsets_bytes)?,
            self.buffer(field, 1, 0)?,
        );
        if len == 0 && offsets.is_empty() {
            return Ok((OffsetBuffer::new_empty(), data));
        }
        let offsets = ScalarBuffer::<O>::new(offsets, 0, len + 1);
        check_offsets(&offsets, data.len())?;
        // SAFETY: `check_offsets` found them non-decreasing, from 0 or more, and in bounds.
        Ok((unsafe { OffsetBuffer::new_unchecked(offsets) }, data))
    }

    fn node(&mut self, field: &Field) -> Result<FieldNode> {
        let nodes = self.batch.nodes();
        let node = next(nodes, &mut self.next_node, "field node", field)?;
        check_node(field, node)?;
        Ok(*node)
    }

    /// The next buffer, of whole `width`-byte elements and at least `min_len` bytes.
    fn buffer(&mut self, field: &Field, width: usize, min_len: i64) -> Result<Buffer> {
        let index = self.next_buffer;
        let buffers = self.batch.buffers();
        let buffer = next(buffers, &mut self.next_buffer, "buffer", field)?;
        check_aligned(index, buffer)?;
        check_length(field, index, buffer, width, min_len)?;
        // `check_buffers` has kept every buffer inside the body.
        Ok(self
            .body
            .slice_with_length(buffer.offset() as usize, buffer.length() as usize))
    }
}

/// Element `*index` of a flatbuffer vector of structs, then `*index` moves on; an error
/// naming `field` if the metadata has run out.
fn next<'a, T: Follow<'a, Inner = &'a T> + 'a>(
    vector: Option<Vector<'a, T>>,
    index: &mut usize,
    what: &str,
    field: &Field,
) -> Result<&'a T> {
    let element = at(vector, *index).ok_or_else(|| {
        QuiverError::invalid(format!(
            "expected {what} {index} for field {:?}, but the record batch has only {}",
            field.name(),
            vector.map_or(0, |v| v.len())
        ))
    })?;
    *index += 1;
    Ok(element)
}

/// The validity bitmap of `len` values, checked against the null count the node declares.
fn nulls(field: &Field, bitmap: Buffer, len: usize, declared: usize) -> Result<NullBuffer> {
    let nulls = NullBuffer::new(BooleanBuffer::new(bitmap, 0, len));
    if nulls.null_count() != declared {
        return Err(QuiverError::invalid(format!(
            "field {:?} declares a null count of {declared}, but its validity bitmap has {} nulls",
            field.name(),
            nulls.null_count()
        )));
    }
    Ok(nulls)
}

/// `len` values of a primitive type from `values`. Through `ArrayData`, which arrow-array
/// turns into each type's array in one place: typed constructors for each of the 25 flat
/// primitive types would add 15 KB of code for the same work.
fn primitive(
    data_type: &DataType,
    values: Buffer,
    len: usize,
    nulls: Option<NullBuffer>,
) -> ArrayRef {
    let data = ArrayDataBuilder::new(data_type.clone())
        .len(len)
        .nulls(nulls)
        .add_buffer(values);
    // SAFETY: `Walk::buffer` found `values` long enough for `len` values of this type and
    // aligned, and `nulls` was built with `len` bits; that is all a primitive array needs.
    make_array(unsafe { data.build_unchecked() })
}
