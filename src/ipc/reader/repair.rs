//! Defects that real producers write and other readers accept, repaired soundly.
//!
//! - V4 metadata (pyarrow's `metadata_version=V4`, Arrow C++ and arrow-rs writers) gives a
//!   run-end encoded column a validity buffer slot, as V4 gave every type but null; arrow-ipc
//!   reads V5's layout, with none, and so takes every later buffer for the one before it.
//!   The slot is dropped from the metadata before anything reads it; it must be empty.
//! - apache-arrow JS's sparse union builder sets each child only at the rows that select
//!   it, so a child ends at the last such row, short of the union. For a union column
//!   (of a record batch, or a dictionary's values), each child is decoded and validated on
//!   its own length, every row must select a child that reaches it, and then the short
//!   children are padded with nulls (a copy, counted in the stats). A union nested in
//!   another column stays refused: Arrow JS cannot read its own output of one either.
//! - flechette leaves the child values of a null fixed-size list null in the child's
//!   bitmap without counting them in the child's null count. The count is taken from the
//!   bitmap instead, if the difference fits in the values outside the valid lists.
//!
//! The last two run only after full validation refused a batch, so valid batches pay
//! nothing, and what they repair is validated as arrow-ipc validates it: the columns and
//! union children fully, each decoded by arrow-ipc, then the union around the padded
//! children by `UnionArray::try_new`. Dictionary batches
//! are read by the same `read_batch`, so their values are repaired the same way.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef, RecordBatch, RecordBatchOptions, UnionArray};
use arrow_buffer::bit_chunk_iterator::UnalignedBitChunk;
use arrow_buffer::Buffer;
use arrow_data::transform::MutableArrayData;
use arrow_ipc::reader::RecordBatchDecoder;
use arrow_ipc::{FieldNode, MetadataVersion};
use arrow_schema::{DataType, Field, Schema, SchemaRef, UnionMode};

use super::layout::{flatten, layout, Layout, Parts, Rebuilt, Slots};
use super::precheck::child_fields;
use super::{buffer_bytes, bytes_outside};
use crate::ipc::error::{QuiverError, Result};

/// The batch's metadata without the validity slots that V4 writers put before a run-end
/// encoded column's children, or `None` if it has none.
pub(super) fn strip_run_end_slots(
    batch: arrow_ipc::RecordBatch<'_>,
    fields: &[&Field],
    version: MetadataVersion,
) -> Result<Option<Rebuilt>> {
    if version >= MetadataVersion::V5 || !fields.iter().any(|f| has_run_end(f)) {
        return Ok(None);
    }
    let mut parts = Parts::of(batch);
    let slots = Slots {
        union_validity: true,
        run_end_validity: true,
    };
    let Some(layouts) = layout(fields, &parts, slots) else {
        return Ok(None);
    };
    let mut dropped = Vec::new();
    for column in flatten(&layouts) {
        if matches!(column.field.data_type(), DataType::RunEndEncoded(..)) {
            let index = column.own.start;
            let len = parts.buffers[index].length();
            if len != 0 {
                return Err(QuiverError::invalid(format!(
                    "buffer {index} of field {:?}, the validity slot that V4 metadata puts \
                     before a run-end encoded column's children, has {len} bytes, expected 0",
                    column.field.name()
                )));
            }
            dropped.push(index);
        }
    }
    // Last first, so that the indices still hold.
    for index in dropped.into_iter().rev() {
        parts.buffers.remove(index);
    }
    Ok(Some(parts.build(batch.length(), &parts.whole())))
}

/// Decodes a batch that full validation refused, if it has the defects of sparse unions
/// or fixed-size lists above and they can be repaired; `None` if it has neither. Returns
/// the batch and the bytes copied.
pub(super) fn repair(
    body: &Buffer,
    batch: arrow_ipc::RecordBatch<'_>,
    schema: &SchemaRef,
    dictionaries: &HashMap<i64, ArrayRef>,
    version: MetadataVersion,
) -> Result<Option<(RecordBatch, u64)>> {
    let fields = super::fields(schema);
    let mut parts = Parts::of(batch);
    let slots = Slots {
        union_validity: version < MetadataVersion::V5,
        run_end_validity: false,
    };
    let Some(layouts) = layout(&fields, &parts, slots) else {
        return Ok(None);
    };
    let mut repaired = false;
    // Parents first, so that a nested list's null count is repaired before its child's.
    for list in flatten(&layouts) {
        if let Some(nulls) = fixed_size_list_child_nulls(body, &parts, list)? {
            let child = &list.children[0];
            parts.nodes[child.node] = FieldNode::new(child.len as i64, nulls);
            repaired = true;
        }
    }
    for column in &layouts {
        repaired |= check_sparse_union_rows(body, &parts, column, slots)?;
        if let Some(union) = flatten(&column.children)
            .into_iter()
            .find(|l| is_short_union(l))
        {
            let child = union.children.iter().find(|c| c.len < union.len);
            return Err(QuiverError::invalid(format!(
                "sparse union {:?} nested in field {:?} has a child {:?} of {} rows, expected \
                 {} (the union's length)",
                union.field.name(),
                column.field.name(),
                child.map_or("", |c| c.field.name()),
                child.map_or(0, |c| c.len),
                union.len
            )));
        }
    }
    if !repaired {
        return Ok(None);
    }
    let decoder = Decoder {
        body,
        parts: &parts,
        dictionaries,
        version,
    };
    let mut columns = Vec::with_capacity(layouts.len());
    for column in &layouts {
        columns.push(match is_short_union(column) {
            true => decoder.union(column, slots)?,
            false => decoder.decode(column)?,
        });
    }
    let rows = usize::try_from(batch.length()).unwrap_or(usize::MAX);
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let decoded = RecordBatch::try_new_with_options(schema.clone(), columns, &options)?;
    let copied = bytes_outside(&decoded, body);
    Ok(Some((decoded, copied)))
}

/// Whether the field is run-end encoded, or has a run-end encoded field inside.
fn has_run_end(field: &Field) -> bool {
    let data_type = field.data_type();
    matches!(data_type, DataType::RunEndEncoded(..))
        || child_fields(data_type).into_iter().any(has_run_end)
}

/// For the child of a fixed-size list whose bitmap holds more nulls than its node
/// declares, at most its values outside the valid lists more: the bitmap's count.
fn fixed_size_list_child_nulls(
    body: &Buffer,
    parts: &Parts,
    list: &Layout<'_>,
) -> Result<Option<i64>> {
    let (DataType::FixedSizeList(_, size), [child]) = (list.field.data_type(), &list.children[..])
    else {
        return Ok(None);
    };
    let declared = parts.nodes[child.node].null_count();
    if declared <= 0 || !has_bitmap(child.field.data_type()) {
        // A bitmap whose node declares no nulls is not read.
        return Ok(None);
    }
    let index = child.own.start;
    let bitmap = buffer_bytes(body, index, &parts.buffers[index])?;
    let name = |field: &Field| format!("{:?}", field.name());
    let (child_name, list_name) = (name(child.field), name(list.field));
    let needed = child.len.div_ceil(8);
    if bitmap.len() < needed {
        return Err(QuiverError::invalid(format!(
            "field {child_name} (the values of fixed-size list {list_name}) has a validity \
             bitmap of {} bytes for {} values, expected at least {needed}",
            bitmap.len(),
            child.len
        )));
    }
    let nulls = (child.len - UnalignedBitChunk::new(bitmap, 0, child.len).count_ones()) as i64;
    if nulls == declared {
        return Ok(None);
    }
    // The values outside the list's valid lists: those of its null lists, and any past
    // the last list (flechette's child runs one value long after a null list at the end).
    let valid_lists = list.len as i64 - parts.nodes[list.node].null_count();
    let outside = (child.len as i64).saturating_sub(valid_lists.saturating_mul(i64::from(*size)));
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

/// For a sparse union with children shorter than itself: checks that each row selects a
/// child that reaches it, and says that it needs the repair.
fn check_sparse_union_rows(
    body: &Buffer,
    parts: &Parts,
    union: &Layout<'_>,
    slots: Slots,
) -> Result<bool> {
    if !is_short_union(union) {
        return Ok(false);
    }
    let DataType::Union(fields, _) = union.field.data_type() else {
        return Ok(false);
    };
    let index = union.own.start + usize::from(slots.union_validity);
    let type_ids = buffer_bytes(body, index, &parts.buffers[index])?;
    // The prechecks kept the type ids at least as long as the union.
    for (row, id) in type_ids.iter().take(union.len).enumerate() {
        let selected = fields.iter().position(|(t, _)| t == *id as i8);
        // An unknown type id is left to the validation.
        let Some(child) = selected.and_then(|i| union.children.get(i)) else {
            continue;
        };
        if child.len <= row {
            return Err(QuiverError::invalid(format!(
                "row {row} of sparse union {:?} selects child {:?} (type id {id}), which \
                 has {} rows, expected each child to reach every row that selects it",
                union.field.name(),
                child.field.name(),
                child.len
            )));
        }
    }
    Ok(true)
}

fn is_short_union(layout: &Layout<'_>) -> bool {
    matches!(
        layout.field.data_type(),
        DataType::Union(_, UnionMode::Sparse)
    ) && layout.children.iter().any(|c| c.len < layout.len)
}

/// Decodes columns from repaired metadata.
struct Decoder<'a> {
    body: &'a Buffer,
    parts: &'a Parts,
    dictionaries: &'a HashMap<i64, ArrayRef>,
    version: MetadataVersion,
}

impl Decoder<'_> {
    /// A sparse union column from its children, each decoded alone and the short ones
    /// padded, validated as arrow-ipc validates a union.
    fn union(&self, union: &Layout<'_>, slots: Slots) -> Result<ArrayRef> {
        let DataType::Union(fields, _) = union.field.data_type() else {
            return Err(QuiverError::Internal("expected a union".into()));
        };
        let mut children = Vec::with_capacity(union.children.len());
        for child in &union.children {
            let array = self.decode(child)?;
            children.push(match array.len() < union.len {
                true => pad(&array, union.len)?,
                false => array,
            });
        }
        let index = union.own.start + usize::from(slots.union_validity);
        let buffer = &self.parts.buffers[index];
        // The prechecks kept the type ids at least as long as the union.
        if buffer_bytes(self.body, index, buffer)?.len() < union.len {
            return Err(QuiverError::Internal("union type ids too short".into()));
        }
        let type_ids = self
            .body
            .slice_with_length(buffer.offset() as usize, union.len);
        let union = UnionArray::try_new(fields.clone(), type_ids.into(), None, children)?;
        Ok(Arc::new(union))
    }

    /// Decodes one field's nodes and buffers as a batch of its own, with full validation.
    fn decode(&self, layout: &Layout<'_>) -> Result<ArrayRef> {
        let metadata = self.parts.build(layout.len as i64, &layout.span);
        // A union's child may hold nulls that its field does not allow at the top level.
        let field = layout.field.clone().with_nullable(true);
        let schema = Arc::new(Schema::new(vec![field]));
        let decoded = RecordBatchDecoder::try_new(
            self.body,
            metadata.batch(),
            schema,
            self.dictionaries,
            &self.version,
        )?
        .with_require_alignment(false)
        .read_record_batch()?;
        Ok(decoded.column(0).clone())
    }
}

/// `child` followed by nulls up to `len` values, in new buffers.
fn pad(child: &ArrayRef, len: usize) -> Result<ArrayRef> {
    let child = child.to_data();
    let mut padded = MutableArrayData::try_new(vec![&child], true, len)?;
    padded.try_extend(0, 0, child.len())?;
    padded.try_extend_nulls(len - child.len())?;
    Ok(make_array(padded.freeze()))
}
