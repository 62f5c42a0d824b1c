//! Checks that arrow-ipc would otherwise turn into panics.
//!
//! arrow-ipc and arrow-data assume well-formed buffers in places: a typed buffer whose
//! length is not a multiple of its element size, a misaligned buffer, or a union node
//! longer than its type-id buffer panics (`typed_data`, `slice_with_length`) instead of
//! returning an error. A panic aborts a wasm instance, so every record batch that
//! arrow-ipc decodes is walked here first, in the order arrow-ipc consumes nodes and
//! buffers, and refused with an error. Where the walk finds too few nodes or buffers it
//! stops: arrow-ipc reports that. Batches of flat columns, which Quiver builds itself, are
//! checked by the same node and buffer checks as `flat.rs` takes each one.
//!
//! The walk also finds, where it passes them, the defects of real producers that
//! `repair.rs` repairs, and pads the short children of sparse unions.

use arrow_buffer::Buffer;
use arrow_ipc::{FieldNode, MetadataVersion};
use arrow_schema::{DataType, Field, UnionMode};
use flatbuffers::{Follow, Vector};

use super::buffer_bytes;
use super::node_checks::{check_aligned, check_length, check_node};
use super::repair::{self, BodyLimit, Fixes, ListValues};
use crate::ipc::error::{QuiverError, Result};

/// Refuses schema parameters that arrow-rs converts with a panic (a negative fixed size).
pub(crate) fn check_schema(fields: &[&Field]) -> Result<()> {
    for field in fields {
        let size = match field.data_type() {
            DataType::FixedSizeBinary(n) | DataType::FixedSizeList(_, n) => Some(*n),
            _ => None,
        };
        if let Some(n) = size.filter(|n| *n < 0) {
            return Err(QuiverError::invalid(format!(
                "field {:?} declares fixed size {n}, expected a non-negative size",
                field.name()
            )));
        }
        let children: Vec<&Field> = match field.data_type() {
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => vec![f.as_ref()],
            DataType::Struct(fs) => fs.iter().map(|f| f.as_ref()).collect(),
            DataType::Union(fs, _) => fs.iter().map(|(_, f)| f.as_ref()).collect(),
            DataType::RunEndEncoded(a, b) => vec![a.as_ref(), b.as_ref()],
            _ => Vec::new(),
        };
        check_schema(&children)?;
    }
    Ok(())
}

/// Walks `fields` over the nodes and buffers of `batch` (whose body is `body`), and
/// returns the defects of real producers found on the way that `repair.rs` repairs. A
/// body with padded buffers after it may hold at most `max_body` bytes.
pub(crate) fn precheck(
    batch: arrow_ipc::RecordBatch<'_>,
    fields: &[&Field],
    version: MetadataVersion,
    body: &Buffer,
    max_body: BodyLimit,
) -> Result<Fixes> {
    // The flatbuffer vectors are read in place: this runs for every batch.
    let mut walk = Walk {
        nodes: batch.nodes(),
        buffers: batch.buffers(),
        variadic: batch.variadicBufferCounts(),
        next_node: 0,
        next_buffer: 0,
        next_variadic: 0,
        version,
        body,
        pad: 0,
        fixes: Fixes {
            max_body,
            ..Fixes::default()
        },
    };
    for (index, buffer) in walk.buffers.iter().flatten().enumerate() {
        check_aligned(index, buffer)?;
    }
    for field in fields {
        if walk.field(field)?.is_none() {
            break;
        }
    }
    Ok(walk.fixes)
}

struct Walk<'a> {
    nodes: Option<Vector<'a, FieldNode>>,
    buffers: Option<Vector<'a, arrow_ipc::Buffer>>,
    variadic: Option<Vector<'a, i64>>,
    next_node: usize,
    next_buffer: usize,
    next_variadic: usize,
    version: MetadataVersion,
    body: &'a Buffer,
    /// Null rows to add to the field walked next.
    pad: i64,
    fixes: Fixes,
}

/// Element `index` of a flatbuffer vector of structs, if there is one.
pub(super) fn at<'a, T: Follow<'a, Inner = &'a T> + 'a>(
    vector: Option<Vector<'a, T>>,
    index: usize,
) -> Option<&'a T> {
    vector.filter(|v| index < v.len()).map(|v| v.get(index))
}

/// `None` means the metadata ran out: stop and let arrow-ipc report it.
type Step = Result<Option<()>>;

impl Walk<'_> {
    fn node(&mut self, field: &Field) -> Result<Option<FieldNode>> {
        let Some(node) = at(self.nodes, self.next_node).copied() else {
            return Ok(None);
        };
        self.next_node += 1;
        check_node(field, &node)?;
        Ok(Some(node))
    }

    /// Takes the next buffer, checking that its length is a whole number of `width`-byte
    /// elements (width 1 for bitmaps and byte data) and at least `min_len`.
    fn buffer(&mut self, field: &Field, width: usize, min_len: i64) -> Step {
        let Some(buffer) = at(self.buffers, self.next_buffer).copied() else {
            return Ok(None);
        };
        check_length(field, self.next_buffer, &buffer, width, min_len)?;
        self.next_buffer += 1;
        Ok(Some(()))
    }

    fn buffers(&mut self, field: &Field, widths: &[usize]) -> Step {
        for width in widths {
            if self.buffer(field, *width, 0)?.is_none() {
                return Ok(None);
            }
        }
        Ok(Some(()))
    }

    fn field(&mut self, field: &Field) -> Step {
        use DataType::*;
        let pad = std::mem::take(&mut self.pad);
        let data_type = field.data_type();
        if let RunEndEncoded(ends, values) = data_type {
            if pad > 0 {
                repair::pads(field)?;
            }
            if self.node(field)?.is_none()
                || (self.version < MetadataVersion::V5 && self.run_end_slot(field)?.is_none())
                || self.field(ends)?.is_none()
            {
                return Ok(None);
            }
            return self.field(values);
        }
        let Some(node) = self.node(field)? else {
            return Ok(None);
        };
        if pad > 0 {
            self.pad_field(field, &node, pad)?;
        }
        let step = match data_type {
            Null => Some(()),
            Utf8 | Binary => self.buffers(field, &[1, 4, 1])?,
            LargeUtf8 | LargeBinary => self.buffers(field, &[1, 8, 1])?,
            Utf8View | BinaryView => {
                let Some(count) = self
                    .variadic
                    .filter(|v| self.next_variadic < v.len())
                    .map(|v| v.get(self.next_variadic))
                else {
                    return Ok(None);
                };
                self.next_variadic += 1;
                let data = usize::try_from(count).unwrap_or(usize::MAX);
                if data > self.buffers.map_or(0, |b| b.len()) {
                    return Ok(None);
                }
                let widths: Vec<usize> = [1, 16].into_iter().chain(vec![1; data]).collect();
                self.buffers(field, &widths)?
            }
            List(child) | Map(child, _) => self.list(field, child, &[1, 4])?,
            LargeList(child) => self.list(field, child, &[1, 8])?,
            ListView(child) => self.list(field, child, &[1, 4, 4])?,
            LargeListView(child) => self.list(field, child, &[1, 8, 8])?,
            FixedSizeList(child, size) => {
                if self.buffers(field, &[1])?.is_none() {
                    return Ok(None);
                }
                self.list_values(field, &node, child, *size)?;
                self.pad = pad.saturating_mul(i64::from(*size));
                self.field(child)?
            }
            Struct(children) => {
                if self.buffers(field, &[1])?.is_none() {
                    return Ok(None);
                }
                for child in children {
                    self.pad = pad;
                    if self.field(child)?.is_none() {
                        return Ok(None);
                    }
                }
                Some(())
            }
            Union(children, mode) => {
                if self.version < MetadataVersion::V5 && self.buffers(field, &[1])?.is_none() {
                    return Ok(None);
                }
                let (len, type_ids) = (node.length(), self.next_buffer);
                if self.buffer(field, 1, len)?.is_none() {
                    return Ok(None);
                }
                if *mode == UnionMode::Dense && self.buffer(field, 4, len * 4)?.is_none() {
                    return Ok(None);
                }
                for (type_id, child) in children.iter() {
                    if *mode == UnionMode::Sparse {
                        let Some(short) = self.short_child(field, len, type_ids, type_id, child)?
                        else {
                            return Ok(None);
                        };
                        self.pad = short;
                    }
                    if self.field(child)?.is_none() {
                        return Ok(None);
                    }
                }
                Some(())
            }
            Dictionary(key, _) => self.buffers(field, &[1, key.primitive_width().unwrap_or(1)])?,
            FixedSizeBinary(_) => self.buffers(field, &[1, 1])?,
            other => self.buffers(field, &[1, other.primitive_width().unwrap_or(1)])?,
        };
        Ok(step)
    }

    /// Takes the validity slot that V4 metadata gives a run-end encoded column, to drop.
    fn run_end_slot(&mut self, field: &Field) -> Step {
        let Some(buffer) = at(self.buffers, self.next_buffer) else {
            return Ok(None);
        };
        repair::check_run_end_slot(field, self.next_buffer, buffer)?;
        self.fixes.dropped.push(self.next_buffer);
        self.next_buffer += 1;
        Ok(Some(()))
    }

    /// Records the null count to give a fixed-size list's values, whose node and bitmap
    /// come next, if they have flechette's defect.
    fn list_values(
        &mut self,
        list: &Field,
        node: &FieldNode,
        child: &Field,
        size: i32,
    ) -> Result<()> {
        let index = self.next_node;
        let (Some(child_node), Some(bitmap)) =
            (at(self.nodes, index), at(self.buffers, self.next_buffer))
        else {
            return Ok(());
        };
        let values = ListValues {
            list,
            lists: node.length(),
            // A list nested in a list may have had its own count repaired.
            list_nulls: self.fixes.nulls_of(index - 1).unwrap_or(node.null_count()),
            size,
            child,
            node: child_node,
            index: self.next_buffer,
            bitmap,
        };
        if let Some(nulls) = repair::fixed_size_list_child_nulls(self.body, values)? {
            self.fixes.nulls.push((index, nulls));
        }
        Ok(())
    }

    /// The null rows to add to the child of a sparse union of `len` rows, whose node comes
    /// next: as many as it is short of the union, if it reaches every row that selects it.
    /// `type_ids` is the index of the union's type id buffer.
    fn short_child(
        &self,
        union: &Field,
        len: i64,
        type_ids: usize,
        type_id: i8,
        child: &Field,
    ) -> Result<Option<i64>> {
        let (Some(node), Some(ids)) = (at(self.nodes, self.next_node), at(self.buffers, type_ids))
        else {
            return Ok(None);
        };
        let rows = node.length();
        if rows == len {
            return Ok(Some(0));
        }
        // The walk kept the type ids at least `len` long, and `check_buffers` in the body.
        let ids = &buffer_bytes(self.body, type_ids, ids)?[..len as usize];
        let needed = ids
            .iter()
            .rposition(|id| *id as i8 == type_id)
            .map_or(0, |r| r + 1);
        if rows < needed as i64 || rows > len {
            return Err(QuiverError::invalid(format!(
                "field {:?} of sparse union {:?} has {rows} rows, expected from {needed} (the \
                 rows up to the last that selects it) to {len} (the union's)",
                child.name(),
                union.name()
            )));
        }
        Ok(Some(len - rows))
    }

    /// Pads `field`, whose `node` was just taken and whose own buffers come next, with
    /// `pad` null rows (`repair.rs`).
    fn pad_field(&mut self, field: &Field, node: &FieldNode, pad: i64) -> Result<()> {
        let index = self.next_node - 1;
        let nulls = self.fixes.nulls_of(index).unwrap_or(node.null_count());
        let rows = (node.length(), nulls, pad);
        check_node(
            field,
            &FieldNode::new(rows.0.saturating_add(pad), nulls.saturating_add(pad)),
        )?;
        self.fixes.padded.push((index, pad));
        let (count, kind) = repair::pads(field)?;
        for i in 0..count {
            let index = self.next_buffer + i;
            let Some(buffer) = at(self.buffers, index) else {
                return Ok(());
            };
            let kind = if i == 0 { repair::Pad::Bitmap } else { kind };
            self.fixes
                .pad(field, self.body, (index, buffer), kind, rows)?;
        }
        Ok(())
    }

    fn list(&mut self, field: &Field, child: &Field, widths: &[usize]) -> Step {
        if self.buffers(field, widths)?.is_none() {
            return Ok(None);
        }
        self.field(child)
    }
}
