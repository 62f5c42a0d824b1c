//! Checks that arrow-ipc would otherwise turn into panics.
//!
//! arrow-ipc and arrow-data assume well-formed buffers in places: a typed buffer whose
//! length is not a multiple of its element size, a misaligned buffer, or a union node
//! longer than its type-id buffer panics (`typed_data`, `slice_with_length`) instead of
//! returning an error. A panic aborts a wasm instance, so every record batch is walked
//! here first, in the order arrow-ipc consumes nodes and buffers, and refused with an
//! error. Where the walk finds too few nodes or buffers it stops: arrow-ipc reports that.

use arrow_ipc::{FieldNode, MetadataVersion};
use arrow_schema::{DataType, Field, UnionMode};
use flatbuffers::{Follow, Vector};

use super::flat::is_flat;
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

/// Walks `fields` over the nodes and buffers of `batch`.
pub(crate) fn precheck(
    batch: arrow_ipc::RecordBatch<'_>,
    fields: &[&Field],
    version: MetadataVersion,
) -> Result<()> {
    // The flatbuffer vectors are read in place: this runs for every batch.
    let mut walk = Walk {
        nodes: batch.nodes(),
        buffers: batch.buffers(),
        variadic: batch.variadicBufferCounts(),
        next_node: 0,
        next_buffer: 0,
        next_variadic: 0,
        version,
    };
    for (index, buffer) in walk.buffers.iter().flatten().enumerate() {
        if buffer.offset() % 8 != 0 {
            return Err(QuiverError::invalid(format!(
                "buffer {index} starts at body offset {}, expected a multiple of 8",
                buffer.offset()
            )));
        }
    }
    for field in fields {
        if walk.field(field)?.is_none() {
            break;
        }
    }
    Ok(())
}

struct Walk<'a> {
    nodes: Option<Vector<'a, FieldNode>>,
    buffers: Option<Vector<'a, arrow_ipc::Buffer>>,
    variadic: Option<Vector<'a, i64>>,
    next_node: usize,
    next_buffer: usize,
    next_variadic: usize,
    version: MetadataVersion,
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
        let (length, nulls) = (node.length(), node.null_count());
        if length < 0 || nulls < 0 || nulls > length || length > i64::from(i32::MAX) {
            return Err(QuiverError::invalid(format!(
                "field {:?} has length {length} and null count {nulls}, expected \
                 0 <= null count <= length <= {}",
                field.name(),
                i32::MAX
            )));
        }
        Ok(Some(node))
    }

    /// Takes the next buffer, checking that its length is a whole number of `width`-byte
    /// elements (width 1 for bitmaps and byte data) and at least `min_len`.
    fn buffer(&mut self, field: &Field, width: usize, min_len: i64) -> Step {
        let Some(buffer) = at(self.buffers, self.next_buffer).copied() else {
            return Ok(None);
        };
        let index = self.next_buffer;
        self.next_buffer += 1;
        let len = buffer.length();
        if len < 0 || len % width as i64 != 0 || len < min_len {
            let at_least = match min_len {
                0 => String::new(),
                n => format!(" of at least {n}"),
            };
            return Err(QuiverError::invalid(format!(
                "buffer {index} of field {:?} has {len} bytes, expected a multiple of \
                 {width}{at_least}",
                field.name()
            )));
        }
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
        let data_type = field.data_type();
        if let RunEndEncoded(ends, values) = data_type {
            if self.node(field)?.is_none() || self.field(ends)?.is_none() {
                return Ok(None);
            }
            return self.field(values);
        }
        let Some(node) = self.node(field)? else {
            return Ok(None);
        };
        if is_flat(data_type) {
            return self.flat(field, node);
        }
        let step = match data_type {
            Null => Some(()),
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
            FixedSizeList(child, _) => self.list(field, child, &[1])?,
            Struct(children) => {
                if self.buffers(field, &[1])?.is_none() {
                    return Ok(None);
                }
                for child in children {
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
                let len = node.length();
                if self.buffer(field, 1, len)?.is_none() {
                    return Ok(None);
                }
                if *mode == UnionMode::Dense && self.buffer(field, 4, len * 4)?.is_none() {
                    return Ok(None);
                }
                for (_, child) in children.iter() {
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

    /// A flat type's buffers must also be long enough for its length: the reader builds
    /// flat columns itself (see `flat.rs`), with arrow-array constructors that panic on a
    /// short buffer. These are the lengths arrow's validation requires.
    fn flat(&mut self, field: &Field, node: FieldNode) -> Step {
        use DataType::*;
        let (len, nulls) = (node.length(), node.null_count());
        let bitmap = (len + 7) / 8;
        // arrow-ipc ignores the validity buffer of a field without nulls.
        if self
            .buffer(field, 1, if nulls > 0 { bitmap } else { 0 })?
            .is_none()
        {
            return Ok(None);
        }
        let offsets = |width: i64| if len > 0 { (len + 1) * width } else { 0 };
        match field.data_type() {
            Utf8 | Binary => self.offsets_and_data(field, 4, offsets(4)),
            LargeUtf8 | LargeBinary => self.offsets_and_data(field, 8, offsets(8)),
            Boolean => self.buffer(field, 1, bitmap),
            other => {
                let width = other.primitive_width().unwrap_or(1);
                self.buffer(field, width, len * width as i64)
            }
        }
    }

    fn offsets_and_data(&mut self, field: &Field, width: usize, min_len: i64) -> Step {
        if self.buffer(field, width, min_len)?.is_none() {
            return Ok(None);
        }
        self.buffer(field, 1, 0)
    }

    fn list(&mut self, field: &Field, child: &Field, widths: &[usize]) -> Step {
        if self.buffers(field, widths)?.is_none() {
            return Ok(None);
        }
        self.field(child)
    }
}
