//! Defects that real producers write and other readers accept, repaired in the metadata
//! as the prechecks (`precheck.rs`) walk a batch, before arrow-ipc decodes it with full
//! validation:
//!
//! - V4 metadata (pyarrow's `metadata_version=V4`, Arrow C++ and arrow-rs writers) gives a
//!   run-end encoded column a validity buffer slot, as V4 gave every type but null; arrow-ipc
//!   reads V5's layout, with none, and so takes every later buffer for the one before it.
//!   The slot is dropped from the metadata; it must be empty.
//! - flechette leaves the child values of a null fixed-size list null in the child's
//!   bitmap without counting them in the child's null count. The count is taken from the
//!   bitmap instead, if the difference fits in the values outside the valid lists.
//!
//! Dictionary batches are read by the same `read_batch`, so their values are repaired the
//! same way.

use arrow_buffer::bit_chunk_iterator::UnalignedBitChunk;
use arrow_buffer::Buffer;
use arrow_ipc::FieldNode;
use arrow_schema::{DataType, Field};
use flatbuffers::FlatBufferBuilder;

use super::buffer_bytes;
use crate::ipc::error::{QuiverError, Result};

/// What the prechecks found to repair in a batch's metadata.
#[derive(Default)]
pub(super) struct Fixes {
    /// Nodes whose null count is taken from their bitmap: the index and the count.
    pub nulls: Vec<(usize, i64)>,
    /// The indices of the V4 validity slots of run-end encoded columns, in order.
    pub dropped: Vec<usize>,
}

impl Fixes {
    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty() && self.dropped.is_empty()
    }

    /// The null count that node `index` is repaired to, if it is.
    pub fn nulls_of(&self, index: usize) -> Option<i64> {
        self.nulls
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, n)| *n)
    }

    /// `batch`'s metadata with the fixes, built in `fbb`.
    #[inline(never)]
    pub fn apply<'b>(
        &self,
        batch: arrow_ipc::RecordBatch<'_>,
        fbb: &'b mut FlatBufferBuilder<'static>,
    ) -> arrow_ipc::RecordBatch<'b> {
        let nodes: Vec<FieldNode> = (batch.nodes().into_iter().flatten().enumerate())
            .map(|(i, n)| FieldNode::new(n.length(), self.nulls_of(i).unwrap_or(n.null_count())))
            .collect();
        let buffers: Vec<arrow_ipc::Buffer> = (batch.buffers().into_iter().flatten().enumerate())
            .filter(|(i, _)| !self.dropped.contains(i))
            .map(|(_, b)| *b)
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
