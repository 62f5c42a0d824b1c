//! Defects that real producers write and other readers accept, repaired as the
//! prechecks (`precheck.rs`) walk a batch, before arrow-ipc decodes it with full
//! validation:
//!
//! - V4 metadata (pyarrow's `metadata_version=V4`, Arrow C++ and arrow-rs writers) gives a
//!   run-end encoded column a validity buffer slot, as V4 gave every type but null; arrow-ipc
//!   reads V5's layout, with none, and so takes every later buffer for the one before it.
//!   The slot is dropped from the metadata; it must be empty.
//! - flechette leaves the child values of a null fixed-size list null in the child's
//!   bitmap without counting them in the child's null count. The count is taken from the
//!   bitmap instead, if the difference fits in the values outside the valid lists.
//! - apache-arrow JS's sparse union builder sets each child only at the rows that select
//!   it, so a child ends at the last such row, short of the union. Checked against the
//!   lengths its node declares, as pyarrow's default validation checks, a short child is
//!   padded with null rows: its node is lengthened, and its own buffers (and those of the
//!   children a struct or fixed-size list needs padded too) are copied with the rows
//!   added after the message body, into a new body that the metadata points to. Each row
//!   must select a child that reaches it; a union or run-end encoded field inside a short
//!   child is refused.
//!
//! Dictionary batches are read by the same `read_batch`, so their values are repaired the
//! same way.

use arrow_buffer::bit_chunk_iterator::UnalignedBitChunk;
use arrow_buffer::Buffer;
use arrow_ipc::FieldNode;
use arrow_schema::{DataType, Field};
use flatbuffers::FlatBufferBuilder;

use super::buffer_bytes;
use super::node_checks::check_length;
use crate::ipc::error::{QuiverError, Result};

/// What the prechecks found to repair in a batch's metadata.
#[derive(Default)]
pub(super) struct Fixes {
    /// Nodes whose null count is taken from their bitmap: the index and the count.
    pub nulls: Vec<(usize, i64)>,
    /// The indices of the V4 validity slots of run-end encoded columns, in order.
    pub dropped: Vec<usize>,
    /// Nodes padded with null rows: the index and the rows added.
    pub padded: Vec<(usize, i64)>,
    /// Buffers padded: the index and the padded copy's place in `body`.
    pub moved: Vec<(usize, arrow_ipc::Buffer)>,
    /// Once a buffer is padded: the message body, then the padded buffers, each from a
    /// multiple of 8, within `max_body`.
    pub body: Vec<u8>,
    pub max_body: BodyLimit,
}

/// The most bytes a body the reader builds may hold, and the limit that sets it.
#[derive(Clone, Copy, Default)]
pub(super) struct BodyLimit {
    pub max: u64,
    pub name: &'static str,
}

impl Fixes {
    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty() && self.dropped.is_empty() && self.padded.is_empty()
    }

    /// The null count that node `index` is repaired to, if it is.
    pub fn nulls_of(&self, index: usize) -> Option<i64> {
        found(&self.nulls, index)
    }

    /// `batch`'s metadata with the fixes, built in `fbb`.
    #[inline(never)]
    pub fn apply<'b>(
        &self,
        batch: arrow_ipc::RecordBatch<'_>,
        fbb: &'b mut FlatBufferBuilder<'static>,
    ) -> arrow_ipc::RecordBatch<'b> {
        let nodes: Vec<FieldNode> = (batch.nodes().into_iter().flatten().enumerate())
            .map(|(i, n)| {
                let pad = found(&self.padded, i).unwrap_or(0);
                let nulls = self.nulls_of(i).unwrap_or(n.null_count());
                FieldNode::new(n.length() + pad, nulls + pad)
            })
            .collect();
        let buffers: Vec<arrow_ipc::Buffer> = (batch.buffers().into_iter().flatten().enumerate())
            .filter(|(i, _)| !self.dropped.contains(i))
            .map(|(i, b)| found(&self.moved, i).unwrap_or(*b))
            .collect();
        let variadic: Vec<i64> = batch.variadicBufferCounts().into_iter().flatten().collect();
        let args = arrow_ipc::RecordBatchArgs {
            length: batch.length(),
            nodes: Some(fbb.create_vector(&nodes)),
            buffers: Some(fbb.create_vector(&buffers)),
            compression: None,
            variadicBufferCounts: Some(fbb.create_vector(&variadic)),
        };
        let root = arrow_ipc::RecordBatch::create(fbb, &args);
        fbb.finish(root, None);
        // SAFETY: these bytes were just finished with a `RecordBatch` root in a flatbuffer
        // builder; what the builder writes needs no verification.
        unsafe { flatbuffers::root_unchecked::<arrow_ipc::RecordBatch>(fbb.finished_data()) }
    }

    /// Appends buffer `index` of `field` in `body` (`buffer`, for its node's `len` values,
    /// `nulls` of them null) to `self.body` (which starts as a copy of `body`) with `pad`
    /// values added: null in a bitmap, zero in other bits and values, and offsets that
    /// repeat the last. `len + pad` fits in an i32 (`check_node`).
    #[inline(never)]
    pub fn pad(
        &mut self,
        field: &Field,
        body: &Buffer,
        (index, buffer): (usize, &arrow_ipc::Buffer),
        kind: Pad,
        (len, nulls, pad): (i64, i64, i64),
    ) -> Result<()> {
        let bytes = buffer_bytes(body, index, buffer)?;
        let bytes_of = |values: i64| {
            let values = values as u64;
            match kind {
                Pad::Bitmap | Pad::Bits => values.div_ceil(8),
                Pad::Offsets(w) => (values + 1) * w as u64,
                Pad::Values(w) => values * w as u64,
            }
        };
        let (keep, size) = (bytes_of(len), bytes_of(len + pad));
        if self.body.is_empty() {
            self.body.extend_from_slice(body);
        }
        let start = self.body.len().next_multiple_of(8);
        let total = start as u64 + size;
        let max_body = self.max_body.max.min(isize::MAX as u64);
        if total > max_body {
            return Err(QuiverError::LimitExceeded {
                what: "body padded for a sparse union's short children",
                limit: self.max_body.name,
                found: total,
                max: max_body,
            });
        }
        // A bitmap whose node declares no nulls is not read, nor the offsets of no values.
        let all_valid = kind == Pad::Bitmap && nulls == 0;
        let read = !(all_valid || len == 0 && bytes.is_empty());
        if read {
            // `bytes` is the buffer's whole length.
            check_length(field, index, buffer, 1, keep as i64)?;
        }
        // Both within `max_body`, which fits in an isize.
        let (keep, size) = (keep as usize, size as usize);
        self.moved
            .push((index, arrow_ipc::Buffer::new(start as i64, size as i64)));
        self.body.resize(start + size, 0);
        let out = &mut self.body[start..start + size];
        if read {
            out[..keep].copy_from_slice(&bytes[..keep]);
        } else if all_valid {
            out[..keep].fill(0xff);
        }
        match kind {
            Pad::Offsets(w) => {
                let (values, added) = out.split_at_mut(keep);
                for offset in added.chunks_exact_mut(w) {
                    offset.copy_from_slice(&values[keep - w..]);
                }
            }
            Pad::Values(_) => {}
            _ if len % 8 != 0 => out[len as usize / 8] &= (1u8 << (len % 8)) - 1,
            _ => {}
        }
        Ok(())
    }
}

/// The value recorded for `index` in a list of fixes.
fn found<T: Copy>(fixes: &[(usize, T)], index: usize) -> Option<T> {
    fixes.iter().find(|(i, _)| *i == index).map(|(_, v)| *v)
}

/// How a buffer is padded with null rows.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Pad {
    /// A validity bitmap.
    Bitmap,
    /// Boolean values.
    Bits,
    /// Offsets of this width.
    Offsets(usize),
    /// Values (or list view offsets and sizes) of this width.
    Values(usize),
}

/// How the own buffers of `field`, a short child of a sparse union (or a field that one
/// holds), are padded: how many there are, and how those after the bitmap are padded (the
/// data of strings and binaries needs none).
pub(super) fn pads(field: &Field) -> Result<(usize, Pad)> {
    use DataType::*;
    let width = |t: &DataType| Pad::Values(t.primitive_width().unwrap_or(1));
    Ok(match field.data_type() {
        Null => (0, Pad::Bits),
        Struct(_) | FixedSizeList(..) => (1, Pad::Bits),
        Boolean => (2, Pad::Bits),
        Utf8 | Binary | List(_) | Map(..) => (2, Pad::Offsets(4)),
        LargeUtf8 | LargeBinary | LargeList(_) => (2, Pad::Offsets(8)),
        ListView(_) => (3, Pad::Values(4)),
        LargeListView(_) => (3, Pad::Values(8)),
        Utf8View | BinaryView => (2, Pad::Values(16)),
        // Not negative, as `check_schema` found.
        FixedSizeBinary(n) => (2, Pad::Values(*n as usize)),
        Dictionary(key, _) => (2, width(key)),
        Union(..) | RunEndEncoded(..) => {
            return Err(QuiverError::invalid(format!(
                "field {:?} is a union or run-end encoded field in a short sparse union child, \
                 expected other types there",
                field.name()
            )))
        }
        other => (2, width(other)),
    })
}

/// Refuses a V4 run-end encoded column's validity slot, buffer `index`, unless it is empty.
pub(super) fn check_run_end_slot(
    field: &Field,
    index: usize,
    buffer: &arrow_ipc::Buffer,
) -> Result<()> {
    let len = buffer.length();
    if len != 0 {
        return Err(QuiverError::invalid(format!(
            "buffer {index} of field {:?}, the validity slot that V4 metadata puts before a \
             run-end encoded column's children, has {len} bytes, expected 0",
            field.name()
        )));
    }
    Ok(())
}

/// A fixed-size list (`list`: `lists` lists, `list_nulls` of them null) and its values
/// (`child`: node `node`, and bitmap `bitmap`, which is buffer `index`).
pub(super) struct ListValues<'a> {
    pub list: &'a Field,
    pub lists: i64,
    pub list_nulls: i64,
    pub size: i32,
    pub child: &'a Field,
    pub node: &'a FieldNode,
    pub index: usize,
    pub bitmap: &'a arrow_ipc::Buffer,
}

/// For the values of a fixed-size list whose bitmap holds more nulls than their node
/// declares, at most its values outside the valid lists more: the bitmap's count.
#[inline(never)]
pub(super) fn fixed_size_list_child_nulls(body: &Buffer, v: ListValues<'_>) -> Result<Option<i64>> {
    let declared = v.node.null_count();
    let Ok(len) = usize::try_from(v.node.length()) else {
        return Ok(None);
    };
    if declared <= 0 || !has_bitmap(v.child.data_type()) {
        // A bitmap whose node declares no nulls is not read.
        return Ok(None);
    }
    let bitmap = buffer_bytes(body, v.index, v.bitmap)?;
    let name = |field: &Field| format!("{:?}", field.name());
    let (child_name, list_name) = (name(v.child), name(v.list));
    let needed = len.div_ceil(8);
    if bitmap.len() < needed {
        return Err(QuiverError::invalid(format!(
            "field {child_name} (the values of fixed-size list {list_name}) has a validity \
             bitmap of {} bytes for {len} values, expected at least {needed}",
            bitmap.len(),
        )));
    }
    let nulls = (len - UnalignedBitChunk::new(bitmap, 0, len).count_ones()) as i64;
    if nulls == declared {
        return Ok(None);
    }
    // The values outside the list's valid lists: those of its null lists, and any past
    // the last list (flechette's child runs one value long after a null list at the end).
    let valid_lists = v.lists - v.list_nulls;
    let outside = (len as i64).saturating_sub(valid_lists.saturating_mul(i64::from(v.size)));
    if nulls < declared || nulls - declared > outside {
        return Err(QuiverError::invalid(format!(
            "field {child_name} (the values of fixed-size list {list_name}) declares \
             {declared} nulls and its bitmap holds {nulls}, expected at most {outside} more \
             (its values outside the list's {valid_lists} valid lists)"
        )));
    }
    Ok(Some(nulls))
}

/// Types whose first buffer is a validity bitmap.
fn has_bitmap(data_type: &DataType) -> bool {
    !matches!(
        data_type,
        DataType::Null | DataType::Union(..) | DataType::RunEndEncoded(..)
    )
}
